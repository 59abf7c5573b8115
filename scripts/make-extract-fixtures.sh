#!/usr/bin/env bash
# Makes the generated PDF set of `npm run bench:extract` and test/ingest/pdf-*.test.ts: one known text
# (test/fixtures/extract/source.md, an excerpt of the GPL-3 from /usr/share/common-licenses) typeset by several
# producers, each with its own running headers / page-number forms. The PDFs and truth.txt are committed, so
# tests and the bench need none of these tools; re-run this only to change the set.
# Needs: pdflatex (texlive), groff, ghostscript, pandoc, libreoffice (soffice), python3 with reportlab.
set -euo pipefail
cd "$(dirname "$0")/../test/fixtures/extract"
OUT=$PWD
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3
export SOURCE_DATE_EPOCH=1767225600 FORCE_SOURCE_DATE=1

# truth.txt: the words a faithful extraction gives (headings included, page furniture not).
sed -e 's/^#\+ //' source.md > truth.txt

# --- LaTeX body from the Markdown subset (# / ## headings, paragraphs) ---
"$PY" - source.md > "$WORK/body.tex" <<'EOF'
import re, sys
quote = 0
def tex(s):
    global quote
    s = s.replace('—', '---')
    out = ''
    for ch in s:
        if ch == '"':
            out += '``' if quote == 0 else "''"
            quote ^= 1
        else:
            out += ch
    return out
for line in open(sys.argv[1]).read().split('\n'):
    if line.startswith('# '):
        print('{\\LARGE\\bfseries ' + tex(line[2:]) + '\\par}\\bigskip')
    elif line.startswith('## '):
        print('\\section*{' + tex(line[3:]) + '}')
    else:
        print(tex(line))
EOF

latex() { # name, class options, furniture
  cat > "$WORK/$1.tex" <<EOF
\\documentclass[$2]{article}

\\usepackage{fancyhdr}
\\pagestyle{fancy}
\\fancyhf{}
$3
\\begin{document}
\\input{body}
\\label{lastpage}
\\end{document}
EOF
  (cd "$WORK" && pdflatex -interaction=batchmode "$1.tex" >/dev/null && pdflatex -interaction=batchmode "$1.tex" >/dev/null)
  cp "$WORK/$1.pdf" "$OUT/$1.pdf"
}
# One column, justified, TeX hyphenation, "Page N of M" footer.
latex latex-1col 11pt,a4paper '\lhead{GNU GPL excerpt}\rhead{Extraction test}\cfoot{Page \thepage\ of \pageref{lastpage}}'
# Two columns (IEEE-like), "-N-" footer and a running header.
latex latex-2col 10pt,twocolumn,letterpaper '\chead{Docsearch test suite: two columns}\cfoot{-\thepage-}'
# The two-column file re-distilled by Ghostscript's pdfwrite (its own text encoding and TJ spacing).
gs -q -dNOPAUSE -dBATCH -sDEVICE=pdfwrite -sOutputFile="$OUT/gs-pdfwrite-2col.pdf" "$OUT/latex-2col.pdf"

# --- groff -ms: "- N -" page headers by default; once through gropdf, once PostScript → ps2pdf ---
"$PY" - source.md > "$WORK/body.ms" <<'EOF'
import sys
print('.ds CH - \\\\n% -')
for line in open(sys.argv[1]).read().split('\n'):
    if not line:
        continue
    line = line.replace('—', '\\(em')
    if line.startswith('#'):
        print('.SH\n' + ('\\&' + line.lstrip('# ')))
    else:
        print('.PP\n\\&' + line)
EOF
groff -ms -Tpdf "$WORK/body.ms" > "$OUT/groff-gropdf.pdf"
groff -ms -Tps "$WORK/body.ms" > "$WORK/body.ps"
ps2pdf "$WORK/body.ps" "$OUT/groff-ps2pdf.pdf"

# --- pandoc (pdflatex engine, Times), one column ---
pandoc source.md -o "$OUT/pandoc.pdf" -V geometry:margin=1in -V fontfamily=mathptmx

# --- LibreOffice: pandoc → DOCX → soffice PDF export ---
pandoc source.md -o "$WORK/libreoffice.docx"
(cd "$WORK" && soffice --headless --convert-to pdf libreoffice.docx >/dev/null 2>&1)
cp "$WORK/libreoffice.pdf" "$OUT/libreoffice.pdf"

# --- ReportLab: justified text, two frames per page (columns), "N / M" footer ---
"$PY" - source.md "$OUT/reportlab-2col.pdf" <<'EOF'
import sys
from xml.sax.saxutils import escape
from reportlab.lib.enums import TA_JUSTIFY
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet, ParagraphStyle
from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph

styles = getSampleStyleSheet()
body = ParagraphStyle('body', parent=styles['BodyText'], alignment=TA_JUSTIFY, fontSize=9.5, leading=12)
def story():
    out = []
    for line in open(sys.argv[1]).read().split('\n'):
        if not line:
            continue
        if line.startswith('# '):
            out.append(Paragraph(escape(line[2:]), styles['Title']))
        elif line.startswith('## '):
            out.append(Paragraph(escape(line[3:]), styles['Heading3']))
        else:
            out.append(Paragraph(escape(line), body))
    return out

W, H = A4
# Two builds: the first counts the pages the footer's "of M" needs.
pages = [0]
def furniture(canvas, doc):
    canvas.setFont('Helvetica', 8)
    canvas.drawString(50, H - 36, 'ReportLab justified two-column test')
    canvas.drawCentredString(W / 2, 28, '%d / %d' % (doc.page, pages[0] or 99))

def build(path):
    doc = BaseDocTemplate(path, pagesize=A4, title='GPL excerpt (ReportLab)', invariant=1)
    gap, margin = 18, 50
    cw = (W - 2 * margin - gap) / 2
    frames = [Frame(margin, 50, cw, H - 110, id='l'), Frame(margin + cw + gap, 50, cw, H - 110, id='r')]
    doc.addPageTemplates([PageTemplate(frames=frames, onPage=furniture)])
    doc.build(story())
    return doc.page

pages[0] = build(sys.argv[2])
build(sys.argv[2])
EOF

ls -l "$OUT"/*.pdf
