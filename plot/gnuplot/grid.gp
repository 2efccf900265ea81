# grid.gp: the body of a grid figure (Fig 12, Fig 14). repro-plot writes the variables above
# this line (rows = devices, columns = workloads, one bar per system, ours last and hatched;
# the layout in inches) and the data file: per panel two blocks, row-major:
#   bars:   idx letter value_ms bar_h color ours box_x0 box_x1 box_y0 box_y1 stale
#   (stale 1: a log plot: stale: names, hatched white)
#   labels: x y text rot bold boxed fg bg kind box_x0 box_x1 box_y0 box_y1
# bar_h is the bar clipped to the panel's y range (ymax:); a clipped bar reaches the top, its
# value (a "cut" label) written inside its top, a white break just below that label. Labels (NS/OOM/TLE/ERR marks, the values
# of cut bars, ours' speedup) are placed by repro-plot so that none overlaps another or a
# neighbour's bar: rot 90 is written upward from (x, y), rot 0 is centred on (x, y).
set encoding utf8
set datafile missing "NaN"
font_name = "DejaVu Sans"
dpi = 150.0
txt(s) = (s eq "-") ? "" : s
set style textbox opaque fc "white" noborder margins 0.5, 0.5

do for [fmt in formats] {
  if (fmt eq "pdf") { set terminal pdfcairo noenhanced color size W, H font font_name.",8" fontscale 1.0 linewidth 2 }
  if (fmt eq "png") { set terminal pngcairo noenhanced color size W * dpi, H * dpi font font_name.",8" fontscale dpi / 72.0 linewidth dpi / 72.0 }
  if (fmt eq "svg") { set terminal svg noenhanced size W * 72, H * 72 font font_name.",8" fontscale 4.0 / 3.0 background "white" }
  set output outbase.".".fmt
  set multiplot
  unset label
  # texts at fixed screen positions: y label, row labels (devices), title, CPU note
  set label 1 ylabel_text at screen 0.1 / W, screen (bottom + (H - top - bottom) / 2) / H rotate by 90 center front
  do for [r = 1:nrows] {
    set label 2 + r rowlabel[r] at screen 0.3 / W, screen 1 - (top + (r - 1) * (ph + rgap) + ph / 2) / H rotate by 90 center front font font_name.",8"
  }
  if (strlen(title_text) > 0) { set label 2 title_text at screen 0.5, screen 1 - (note_h + 0.08) / H center front font font_name.",9" }
  if (strlen(note_text) > 0) { set label 99 note_text at screen 0.5, screen 1 - 0.1 / H center front font font_name.":Bold,8" tc rgb "#b00000" }

  # legend strip: boxes and labels at fixed screen positions (terminal-independent)
  lcols = legend_cols
  lw_in = (W - left - right) / lcols
  do for [i = 1:nsys] {
    lc = (i - 1) % lcols; lr = (i - 1) / lcols
    lx = (left + lc * lw_in) / W; ly = 1 - (note_h + 0.14 + lr * 0.22) / H
    set object i rect from screen lx, ly - 0.06 / H to screen lx + 0.22 / W, ly + 0.06 / H fc rgb syscolor[i] fs solid 1.0 border lc rgb "black"
    if (i == ours + 1) {
      set object 100 + i rect from screen lx, ly - 0.06 / H to screen lx + 0.22 / W, ly + 0.06 / H fc rgb "black" fs transparent pattern 4 border lc rgb "black" front
    }
    set label 100 + i legend_text[i] at screen lx + 0.28 / W, ly left font font_name.",8"
  }
  # what the red labels are: ours' speedup, named (ratio_text), under the legend
  if (strlen(ratio_text) > 0) { set label 98 ratio_text at screen left / W, screen 1 - (note_h + 0.12 + legend_rows * 0.22) / H left front font font_name.",7" tc rgb "#b00000" }
  set lmargin at screen 0; set rmargin at screen 1; set tmargin at screen 1; set bmargin at screen 1 - 0.05 / H
  unset border; unset tics; unset xlabel; unset ylabel; unset title; unset logscale
  set xrange [0:1]; set yrange [0:1]
  unset key
  plot NaN notitle
  unset object
  unset label

  set border 3
  set tics nomirror scale 0.5
  set xtics font font_name.",6" offset 0, 0.3
  set ytics nomirror font font_name.",7"
  set grid ytics lc rgb "#dddddd" lw 0.5
  set xrange [-0.6 : nsys - 0.4]
  set xtics () nomirror
  do for [i = 1:nsys] { set xtics add (sprintf("%c", 64 + i) i - 1) }
  set boxwidth 0.8
  unset ylabel
  do for [r = 1:nrows] {
    do for [c = 1:ncols] {
      p = (r - 1) * ncols + (c - 1)
      x0 = (left + (c - 1) * (pw + cgap)) / W
      y1 = 1 - (top + (r - 1) * (ph + rgap)) / H
      set lmargin at screen x0
      set rmargin at screen x0 + pw / W
      set tmargin at screen y1
      set bmargin at screen y1 - ph / H
      ym = panel_ymax[p + 1]
      set yrange [0 : ym]
      set ytics 0, panel_step[p + 1] nomirror
      if (r == 1) { set title collabel[c] offset 0, -0.6 font font_name.",8" } else { unset title }
      B = 2 * p; L = 2 * p + 1
      plot datafile index B using 1:($6 > 0 ? NaN : $4):5 with boxes lc rgb variable fs solid 1.0 border lc rgb "black", \
           datafile index B using 1:($6 > 0 ? $4 : NaN):5 with boxes lc rgb variable fs solid 1.0 border lc rgb "black", \
           datafile index B using 1:($6 > 0 ? $4 : NaN) with boxes lc rgb "black" fs transparent pattern 4 border lc rgb "black", \
           datafile index B using 1:($11 > 0 ? $4 : NaN) with boxes lc rgb "white" fs transparent pattern 5 border lc rgb "black", \
           datafile index L using (strcol(9) eq "cut" ? $1 : NaN):($2 - 0.06 / ph * ym):(0.44):(ym * 0.012) with boxxyerror fs solid 1.0 noborder lc rgb "white", \
           datafile index L using ($4 == 90 && $5 == 0 && $6 == 0 ? $1 : NaN):2:(txt(strcol(3))):7 with labels rotate by 90 left tc rgb variable font font_name.",6", \
           datafile index L using ($4 == 90 && $5 == 0 && $6 == 1 ? $1 : NaN):2:(txt(strcol(3))):7 with labels rotate by 90 left boxed tc rgb variable font font_name.",6", \
           datafile index L using ($4 == 90 && $5 == 1 ? $1 : NaN):2:(txt(strcol(3))):7 with labels rotate by 90 left boxed tc rgb variable font font_name.":Bold,6.5", \
           datafile index L using ($4 == 0 && $5 == 1 ? $1 : NaN):2:(txt(strcol(3))):7 with labels center tc rgb variable font font_name.":Bold,6.5"
    }
  }
  unset multiplot
  set output
}
