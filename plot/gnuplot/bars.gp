# bars.gp: the body of a bar figure (comparison, speedup: one file per device). repro-plot
# writes the variables above this line (the layout in inches too): nrows x ncols panels,
# row-major; each panel has its own y range (panel_lo/hi, ticks panel_step, 0 = log decades),
# its groups (panel_ng of them, labels from grouplabel[panel_g0 + 1]: without the words every
# group of the panel shares when too wide, which its x label panel_xlabel names), its bar width
# and title;
# panel_ref draws the line y = 1 (speedup panels). Data: per panel two blocks:
#   bars:   x value color ours box_x0 box_x1 box_y0 box_y1 column system "label" stale
#   (stale 1: a log plot: stale: names, hatched white)
#   labels: x y text rot bold boxed fg bg kind box_x0 box_x1 box_y0 box_y1
# Labels (NS/OOM/TLE/ERR/n/a marks) are placed by repro-plot: adjacent marks stack, not touch.
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
  # texts at fixed screen positions: row labels, title, CPU note
  do for [r = 1:nrows] {
    set label 2 + r rowlabel[r] at screen 0.12 / W, screen 1 - (top + (r - 1) * (ph + rgap) + ph / 2) / H rotate by 90 center front font font_name.",8"
  }
  if (strlen(title_text) > 0) { set label 2 title_text at screen 0.5, screen 1 - (note_h + 0.08) / H center front font font_name.",9" }
  if (strlen(note_text) > 0) { set label 99 note_text at screen 0.5, screen 1 - 0.1 / H center front font font_name.":Bold,8" tc rgb "#b00000" }

  # legend strip: the systems with bars, boxes and labels at fixed screen positions
  lcols = legend_cols
  lw_in = (W - left - right) / lcols
  do for [i = 1:nleg] {
    lc = (i - 1) % lcols; lr = (i - 1) / lcols
    lx = (left + lc * lw_in) / W; ly = 1 - (note_h + 0.3 + lr * 0.22) / H
    set object i rect from screen lx, ly - 0.06 / H to screen lx + 0.22 / W, ly + 0.06 / H fc rgb legend_color[i] fs solid 1.0 border lc rgb "black"
    if (legend_ours[i]) {
      set object 100 + i rect from screen lx, ly - 0.06 / H to screen lx + 0.22 / W, ly + 0.06 / H fc rgb "black" fs transparent pattern 4 border lc rgb "black" front
    }
    set label 100 + i legend_text[i] at screen lx + 0.28 / W, ly left font font_name.",8"
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
  set ytics nomirror font font_name.",7"
  set grid ytics lc rgb "#dddddd" lw 0.5
  unset ylabel
  unset xlabel
  do for [r = 1:nrows] {
    do for [c = 1:ncols] {
      p = (r - 1) * ncols + (c - 1)
      x0 = (left + (c - 1) * (pw + cgap)) / W
      y1 = 1 - (top + (r - 1) * (ph + rgap)) / H
      set lmargin at screen x0
      set rmargin at screen x0 + pw / W
      set tmargin at screen y1
      set bmargin at screen y1 - ph / H
      lo = panel_lo[p + 1]; hi = panel_hi[p + 1]; ng = panel_ng[p + 1]; barw = panel_barw[p + 1]
      if (ng < 1) { ng = 1 }
      set xrange [-0.5 : ng - 0.5]
      if (xrot) { set xtics () nomirror rotate by 45 right font font_name.",7" offset 0, 0.2 } else { set xtics () nomirror norotate font font_name.",7" offset 0, 0.3 }
      do for [g = 1:ng] { set xtics add (grouplabel[panel_g0[p + 1] + g] g - 1) }
      if (panel_log[p + 1]) { set logscale y; set format y "%g"; set ytics autofreq nomirror } else { unset logscale y; set format y "%g"; set ytics 0, panel_step[p + 1] nomirror }
      set yrange [lo : hi]
      unset arrow
      if (panel_ref[p + 1]) { set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb "#555555" dt 2 lw 0.8 back }
      set title panel_title[p + 1] offset 0, -0.6 font font_name.",8"
      # the x label at the foot of the panel's bottom margin (below the group labels, however
      # they are turned)
      set label 50 panel_xlabel[p + 1] at screen x0 + pw / W / 2, screen y1 - (ph + bottom - 0.1) / H center font font_name.",7"
      B = 2 * p; L = 2 * p + 1
      plot datafile index B using 1:(lo):($1 - barw / 2):($1 + barw / 2):(lo):($4 > 0 ? NaN : $2):3 with boxxyerror lc rgb variable fs solid 1.0 border lc rgb "black" notitle, \
           datafile index B using 1:(lo):($1 - barw / 2):($1 + barw / 2):(lo):($4 > 0 ? $2 : NaN):3 with boxxyerror lc rgb variable fs solid 1.0 border lc rgb "black" notitle, \
           datafile index B using 1:(lo):($1 - barw / 2):($1 + barw / 2):(lo):($4 > 0 ? $2 : NaN) with boxxyerror lc rgb "black" fs transparent pattern 4 border lc rgb "black" notitle, \
           datafile index B using 1:(lo):($1 - barw / 2):($1 + barw / 2):(lo):($12 > 0 ? $2 : NaN) with boxxyerror lc rgb "white" fs transparent pattern 5 border lc rgb "black" notitle, \
           datafile index L using ($4 == 90 && $6 == 0 ? $1 : NaN):2:(txt(strcol(3))):7 with labels rotate by 90 left tc rgb variable font font_name.",6" notitle, \
           datafile index L using ($4 == 90 && $6 == 1 ? $1 : NaN):2:(txt(strcol(3))):7 with labels rotate by 90 left boxed tc rgb variable font font_name.",6" notitle
    }
  }
  unset multiplot
  set output
}
