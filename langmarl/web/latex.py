"""A reward's LaTeX as MathML, so the run page shows the formula with no math library and no
network: Chromium, Firefox and Safari render MathML Core natively.

The conversion runs on the server (``latex2mathml``, pure Python, part of the ``server``
extra). Its output is not trusted as it comes: the LaTeX is written by an LLM, and the
converter copies ``\\text{…}`` verbatim (``\\text{<img onerror=…>}`` comes out as markup) and
turns ``\\href`` into an ``href`` attribute. So the MathML is parsed as XML and rebuilt from an
allow-list: only MathML elements that draw math, only the attributes that style them; text
is escaped on the way out. Anything else (a tag outside the list, markup that does not parse,
LaTeX the converter rejects, the converter missing) gives ``None``, and the page shows the
LaTeX as text: a formula is never worth an error or a script.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

MATHML = "http://www.w3.org/1998/Math/MathML"
ELEMENTS = frozenset(
    {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup",
     "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mmultiscripts",
     "mprescripts", "none", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
     "menclose", "merror", "semantics", "annotation"}
)  # fmt: skip
"""MathML elements kept; any other element rejects the whole formula."""
ATTRIBUTES = frozenset(
    {"display", "mathvariant", "mathcolor", "mathbackground", "mathsize", "displaystyle",
     "scriptlevel", "fence", "stretchy", "separator", "lspace", "rspace", "largeop",
     "movablelimits", "accent", "accentunder", "minsize", "maxsize", "symmetric", "form",
     "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines",
     "frame", "width", "height", "depth", "linethickness", "notation", "voffset", "encoding"}
)  # fmt: skip
"""Attributes kept (presentation only); any other (``href``, ``on…``, ``style``) is dropped."""
MAX_LATEX = 4000
"""Longer LaTeX is shown as text (a reward's formula is a line or two)."""


def latex_mathml(latex: str | None) -> str | None:
    """``latex`` as a ``<math>`` element's markup, or ``None`` if it cannot be shown safely
    (see the module docstring)."""
    if not latex or not latex.strip() or len(latex) > MAX_LATEX:
        return None
    try:
        from latex2mathml.converter import convert
    except ImportError:  # pragma: no cover - the server extra without latex2mathml
        return None
    try:
        root = ElementTree.fromstring(convert(latex.strip()))
    except Exception:  # the converter raises its own exception types for malformed LaTeX
        return None
    if not _clean(root):
        return None
    root.set("xmlns", MATHML)  # names were unqualified by _clean: one declaration, no ns0:
    return ElementTree.tostring(root, encoding="unicode")


def _clean(element: ElementTree.Element) -> bool:
    """Unqualify the names and drop attributes outside :data:`ATTRIBUTES`, in place;
    ``False`` if any element is not an allowed MathML element."""
    namespace, _, name = element.tag.rpartition("}")
    if namespace != "{" + MATHML or name not in ELEMENTS:
        return False
    element.tag = name
    for attribute in [a for a in element.attrib if a not in ATTRIBUTES]:
        del element.attrib[attribute]
    return all(_clean(child) for child in element)
