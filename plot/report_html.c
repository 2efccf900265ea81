/* report_html: the HTML the report's parts share: text escaped (& < > " '), a section's input,
 * table cells, and the page's style and sorting script. */
#include "report_parts.h"

#include <math.h>
#include <string.h>

/* s[0..n) as HTML text: & < > " ' escaped (safe in text and in quoted attributes). */
void rp_escn(FILE *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    switch (s[i]) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&#39;", out); break;
    default: fputc(s[i], out);
    }
  }
}
void rp_esc(FILE *out, const char *s) { rp_escn(out, s, strlen(s)); }

/* "logs <code>DIR" or "tables <code>A, B": a section's input (the caller closes the code). */
void rp_put_input(FILE *out, const rp_entry *e) {
  fputs(e->ntables ? "tables <code>" : "logs <code>", out);
  if (!e->ntables) rp_esc(out, e->logs);
  for (int i = 0; i < e->ntables; i++) {
    if (i) fputs(", ", out);
    rp_esc(out, e->tables[i]);
  }
}

/* <tag>text</tag>, text escaped. */
void rp_cell(FILE *out, const char *tag, const char *text) {
  fprintf(out, "<%s>", tag);
  rp_esc(out, text);
  fprintf(out, "</%s>", tag);
}

/* A number cell (right-aligned, sortable by data-v); empty when v is NAN. */
void rp_num_cell(FILE *out, double v, const char *fmt) {
  if (isnan(v)) {
    fputs("<td class=\"n\" data-v=\"\"></td>", out);
    return;
  }
  fprintf(out, "<td class=\"n\" data-v=\"%.6g\">", v);
  fprintf(out, fmt, v);
  fputs("</td>", out);
}

/* The page's style (the figures' classes follow it: rs_style). Wide tables scroll in their own
 * box (.scroll), figures take the content's width, and a figure that is the page's :target
 * (its link was clicked) covers the window. The tables of logs (.tidy) align their number
 * columns by position: ms, TFLOP/s, peak MiB, then the paper's (p) and the compared (c) ones. */
const char rp_page_style[] =
    "body{font:14px/1.45 system-ui,sans-serif;color:#222;max-width:1240px;margin:1em auto;"
    "padding:0 1em}h1{font-size:1.5em}h2{margin-top:2em;border-bottom:2px solid #ccc}"
    "h3{margin-top:1.6em}small,.note{color:#666}code{font-size:12px;overflow-wrap:anywhere}"
    ".scroll{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;margin:.4em 0 1em;font-size:12px}"
    "th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f1f3f5}table.sort th{cursor:pointer}"
    "td.n,.tidy td:nth-child(n+6):nth-child(-n+8),.tidy.p td:nth-child(9),"
    ".tidy.c td:nth-child(n+9):nth-child(-n+10),.tidy.p.c td:nth-child(11),.only td:nth-child(6)"
    "{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".tidy td:nth-last-child(2){overflow-wrap:anywhere;min-width:10em;max-width:18em}"
    ".tidy td:nth-last-child(1){min-width:14em}"
    ".ok{color:#1a7f37}.bad{color:#c00;font-weight:600}.ns{color:#888}"
    ".warn{color:#9a6700;font-weight:600}.stale{color:#9a6700}tr.stale td{font-style:italic}"
    "td.out{background:#ffd8d8;font-weight:600}tr.out td{border-color:#f5b5b5}"
    "table.verdict{font-size:13px}table.verdict td:nth-child(n+4):nth-child(-n+6)"
    "{text-align:right;white-space:nowrap}"
    ".fig{margin:.5em 0}.fig svg{width:100%;height:auto;max-height:85vh;display:block}"
    ".fig a.zoom{display:block;cursor:zoom-in}.fig figcaption{font-size:11px;color:#888}"
    ".fig .close{display:none}.fig:target{position:fixed;top:0;left:0;right:0;bottom:0;"
    "z-index:9;margin:0;padding:.5em 1em;background:#fff;overflow:auto}"
    ".fig:target svg{height:calc(100vh - 3em);max-height:none}.fig:target a.zoom{cursor:default}"
    ".fig:target .close{display:inline}.fig:target .enlarge{display:none}"
    "details{margin:.3em 0}summary{cursor:pointer}";

/* Sorts a table by the clicked column: by data-v where a cell has it (empty last), numbers in a
 * column whose head is class n (marks last), text naturally. */
const char rp_page_script[] =
    "document.querySelectorAll('table.sort th').forEach(function(th){"
    "th.addEventListener('click',function(){"
    "var tb=th.closest('table').tBodies[0],i=th.cellIndex,d=th.dataset.d==='1'?-1:1,"
    "num=th.classList.contains('n');th.dataset.d=d;"
    "function k(tr){var c=tr.cells[i];if(!c)return'';var v=c.dataset.v;"
    "if(v!==undefined)return v===''?Infinity:+v;"
    "if(num){v=parseFloat(c.textContent);return isNaN(v)?Infinity:v;}return c.textContent;}"
    "Array.from(tb.rows).sort(function(a,b){var x=k(a),y=k(b);"
    "return d*(typeof x==='number'&&typeof y==='number'?(x>y)-(x<y):"
    "String(x).localeCompare(String(y),undefined,{numeric:true}));})"
    ".forEach(function(tr){tb.appendChild(tr);});});});";

void rp_put_count(FILE *out, int v, const char *bad_class) {
  int mark = v && *bad_class;
  fprintf(out, "<td class=\"n%s%s\" data-v=\"%d\">%d</td>", mark ? " " : "", mark ? bad_class : "",
          v, v);
}
