# grid.gp: the body of a grid figure (Fig 12, Fig 14). repro-plot writes the variables above
# this line (rows = devices, columns = workloads, one bar per system, ours last and hatched)
# and the data file: one block per panel, row-major, columns
#   idx letter value_ms bar_h color ours mark mark_y cut cut_y speedup speedup_y
# bar_h is the bar clipped to the panel's y range; cut holds the value of a clipped bar;
# mark is NS/OOM/TLE/ERR where there is no bar; "-" means nothing to write.
set encoding utf8
set datafile missing "NaN"
font_name = "DejaVu Sans"
dpi = 150.0
# layout, in inches
right = 0.3; top = 0.45 + 0.22 * legend_rows; bottom = 0.32; rgap = 0.42
pw = (W - left - right - (ncols - 1) * cgap) / ncols
ph = (H - top - bottom - (nrows - 1) * rgap) / nrows
txt(s) = (s eq "-") ? "" : s

do for [fmt in formats] {
  if (fmt eq "pdf") { set terminal pdfcairo noenhanced color size W, H font font_name.",8" fontscale 1.0 linewidth 2 }
  if (fmt eq "png") { set terminal pngcairo noenhanced color size W * dpi, H * dpi font font_name.",8" fontscale dpi / 72.0 linewidth dpi / 72.0 }
  if (fmt eq "svg") { set terminal svg noenhanced size W * 72, H * 72 font font_name.",8" background "white" }
  set output outbase.".".fmt
  set multiplot
  unset label
  set label 1 ylabel_text at screen 0.12 / W, screen (bottom + (H - top - bottom) / 2) / H rotate by 90 center front
  if (strlen(title_text) > 0) { set label 2 title_text at screen 0.5, screen 1 - 0.08 / H center front font font_name.",9" }

  # legend strip: boxes and labels at fixed screen positions (terminal-independent)
  lcols = legend_cols
  lw_in = (W - left - right) / lcols
  do for [i = 1:nsys] {
    lc = (i - 1) % lcols; lr = (i - 1) / lcols
    lx = (left + lc * lw_in) / W; ly = 1 - (0.14 + lr * 0.22) / H
    if (i == ours + 1) {
      set object i rect from screen lx, ly - 0.06 / H to screen lx + 0.22 / W, ly + 0.06 / H fc rgb syscolor[i] fs solid 1.0 border lc rgb "black"
      set object 100 + i rect from screen lx, ly - 0.06 / H to screen lx + 0.22 / W, ly + 0.06 / H fc rgb "black" fs transparent pattern 4 border lc rgb "black" front
    } else {
      set object i rect from screen lx, ly - 0.06 / H to screen lx + 0.22 / W, ly + 0.06 / H fc rgb syscolor[i] fs solid 1.0 border lc rgb "black"
    }
    set label 10 + i legend_text[i] at screen lx + 0.28 / W, ly left font font_name.",8"
  }
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
      if (ytics_step > 0) { set ytics 0, ytics_step nomirror } else { set ytics autofreq nomirror }
      if (r == 1) { set title collabel[c] offset 0, -0.6 font font_name.",8" } else { unset title }
      if (c == 1) { set ylabel rowlabel[r] offset 0.5, 0 font font_name.",8" } else { unset ylabel }
      plot datafile index p using 1:($6 > 0 ? NaN : $4):5 with boxes lc rgb variable fs solid 1.0 border lc rgb "black", \
           datafile index p using 1:($6 > 0 ? $4 : NaN):5 with boxes lc rgb variable fs solid 1.0 border lc rgb "black", \
           datafile index p using 1:($6 > 0 ? $4 : NaN) with boxes lc rgb "black" fs transparent pattern 4 border lc rgb "black", \
           datafile index p using 1:8:(txt(strcol(7))) with labels rotate by 90 left font font_name.",6", \
           datafile index p using 1:10:(txt(strcol(9))) with labels rotate by 90 right font font_name.",6", \
           datafile index p using 1:12:(txt(strcol(11))) with labels center offset 0, 0.45 font font_name.",6" tc rgb "#b00000"
    }
  }
  unset multiplot
  set output
}
