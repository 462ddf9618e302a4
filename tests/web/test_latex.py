"""A reward's LaTeX as MathML (langmarl/web/latex.py): drawn when it converts cleanly, text
(``None``) when it is malformed or would carry markup or script."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest

from langmarl.web.latex import MATHML, latex_mathml


def test_a_formula_becomes_one_math_element() -> None:
    mathml = latex_mathml(r"r = w_1 \cdot \frac{x}{y} - \lambda \|a\|^2")
    assert mathml is not None
    root = ElementTree.fromstring(mathml)
    assert root.tag == f"{{{MATHML}}}math"
    assert root.find(f".//{{{MATHML}}}mfrac") is not None
    assert "ns0:" not in mathml  # one default namespace, as a browser reads it


@pytest.mark.parametrize("latex", [r"x^", r"\left( x", "}{", "", "   ", None, "x" * 5000])
def test_malformed_or_empty_latex_is_left_as_text(latex: str | None) -> None:
    assert latex_mathml(latex) is None


@pytest.mark.parametrize(
    "latex", [r"\text{<img src=x onerror=alert(1)>}", r"\text{<b>bold</b>}", r"\text{a & b}"]
)
def test_markup_smuggled_in_text_is_left_as_text(latex: str) -> None:
    # the converter copies \text{...} verbatim: markup there must never reach the page
    assert latex_mathml(latex) is None


def test_links_and_unknown_attributes_are_dropped() -> None:
    mathml = latex_mathml(r"\href{javascript:alert(1)}{x} + \color{red}{y}")
    assert mathml is not None
    assert "href" not in mathml and "javascript" not in mathml
    assert 'mathcolor="red"' in mathml  # presentation attributes stay


def test_escaped_text_stays_escaped() -> None:
    mathml = latex_mathml(r"\text{a &lt; b}")
    assert mathml is not None and "&lt;" in mathml
    [text] = ElementTree.fromstring(mathml).iter(f"{{{MATHML}}}mtext")
    assert text.text == "a\xa0<\xa0b" and len(text) == 0  # text (spaces kept), no element
