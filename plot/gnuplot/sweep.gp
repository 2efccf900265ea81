# sweep.gp: the body of a sequence-length sweep figure (Fig 13). repro-plot writes the
# variables above this line; rows = devices, left column throughput (TFLOP/s), right column
# peak memory (MiB, log scale); groups = sequence lengths, one bar per system, ours hatched.
# Data: blocks (device-major: tflops, peak_mib), columns
#   x value color ours mark mark_y seqlen system
set encoding utf8
set datafile missing "NaN"
font_name = "DejaVu Sans"
dpi = 150.0
left = 0.8; right = 0.15; top = 0.45 + 0.22 * legend_rows; bottom = 0.45; cgap = 0.75; rgap = 0.5
pw = (W - left - right - cgap) / 2
ph = (H - top - bottom - (nrows - 1) * rgap) / nrows
txt(s) = (s eq "-") ? "" : s
array coltitle[2] = ["Throughput (TFLOP/s)", "Peak memory (MiB, log scale)"]

do for [fmt in formats] {
  if (fmt eq "pdf") { set terminal pdfcairo noenhanced color size W, H font font_name.",8" fontscale 1.0 linewidth 2 }
  if (fmt eq "png") { set terminal pngcairo noenhanced color size W * dpi, H * dpi font font_name.",8" fontscale dpi / 72.0 linewidth dpi / 72.0 }
  if (fmt eq "svg") { set terminal svg noenhanced size W * 72, H * 72 font font_name.",8" background "white" }
  set output outbase.".".fmt
  set multiplot
  unset label
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
  set ytics nomirror font font_name.",7"
  set grid ytics lc rgb "#dddddd" lw 0.5
  set xrange [-0.5 : ngroups - 0.5]
  set xtics () nomirror
  do for [g = 1:ngroups] { set xtics add (grouplabel[g] g - 1) }
  do for [r = 1:nrows] {
    do for [c = 1:2] {
      p = (r - 1) * 2 + (c - 1)
      x0 = (left + (c - 1) * (pw + cgap)) / W
      y1 = 1 - (top + (r - 1) * (ph + rgap)) / H
      set lmargin at screen x0
      set rmargin at screen x0 + pw / W
      set tmargin at screen y1
      set bmargin at screen y1 - ph / H
      lo = panel_lo[p + 1]; hi = panel_hi[p + 1]
      if (c == 2) { set logscale y; set format y "%.0s%c" } else { unset logscale y; set format y "%g" }
      set yrange [lo : hi]
      set title (r == 1 ? coltitle[c] : "") offset 0, -0.6 font font_name.",8"
      set ylabel (c == 1 ? rowlabel[r] : "") offset 1.2, 0 font font_name.",8"
      set xlabel (r == nrows ? "sequence length" : "") offset 0, 0.6 font font_name.",7"
      plot datafile index p using 1:(lo):($1 - barw / 2):($1 + barw / 2):(lo):($4 > 0 ? NaN : $2):3 with boxxyerror lc rgb variable fs solid 1.0 border lc rgb "black" notitle, \
           datafile index p using 1:(lo):($1 - barw / 2):($1 + barw / 2):(lo):($4 > 0 ? $2 : NaN):3 with boxxyerror lc rgb variable fs solid 1.0 border lc rgb "black" notitle, \
           datafile index p using 1:(lo):($1 - barw / 2):($1 + barw / 2):(lo):($4 > 0 ? $2 : NaN) with boxxyerror lc rgb "black" fs transparent pattern 4 border lc rgb "black" notitle, \
           datafile index p using 1:6:(txt(strcol(5))) with labels rotate by 90 left font font_name.",6" notitle
    }
  }
  unset multiplot
  set output
}
