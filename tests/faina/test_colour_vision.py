"""Colour differences (CIEDE2000), colour-vision simulation and the label palette measured with them."""

from __future__ import annotations

import numpy as np
import pytest

from faina.analysis.colour_vision import (
    MACHADO_2009,
    VISIONS,
    candidate_colours,
    ciede2000,
    closest_pair,
    hex_to_rgb,
    lab,
    max_min_palette,
)
from faina.analysis.span_html import LABEL_COLOURS, contrast, text_colour

# Sharma, Wu and Dalal (2005), Table 1: L1 a1 b1 L2 a2 b2 ΔE00, the published test pairs of CIEDE2000
SHARMA_2005 = """50.0000 2.6772 -79.7751 50.0000 0.0000 -82.7485 2.0425
50.0000 3.1571 -77.2803 50.0000 0.0000 -82.7485 2.8615
50.0000 2.8361 -74.0200 50.0000 0.0000 -82.7485 3.4412
50.0000 -1.3802 -84.2814 50.0000 0.0000 -82.7485 1.0000
50.0000 -1.1848 -84.8006 50.0000 0.0000 -82.7485 1.0000
50.0000 -0.9009 -85.5211 50.0000 0.0000 -82.7485 1.0000
50.0000 0.0000 0.0000 50.0000 -1.0000 2.0000 2.3669
50.0000 -1.0000 2.0000 50.0000 0.0000 0.0000 2.3669
50.0000 2.4900 -0.0010 50.0000 -2.4900 0.0009 7.1792
50.0000 2.4900 -0.0010 50.0000 -2.4900 0.0010 7.1792
50.0000 2.4900 -0.0010 50.0000 -2.4900 0.0011 7.2195
50.0000 2.4900 -0.0010 50.0000 -2.4900 0.0012 7.2195
50.0000 -0.0010 2.4900 50.0000 0.0009 -2.4900 4.8045
50.0000 -0.0010 2.4900 50.0000 0.0010 -2.4900 4.8045
50.0000 -0.0010 2.4900 50.0000 0.0011 -2.4900 4.7461
50.0000 2.5000 0.0000 50.0000 0.0000 -2.5000 4.3065
50.0000 2.5000 0.0000 73.0000 25.0000 -18.0000 27.1492
50.0000 2.5000 0.0000 61.0000 -5.0000 29.0000 22.8977
50.0000 2.5000 0.0000 56.0000 -27.0000 -3.0000 31.9030
50.0000 2.5000 0.0000 58.0000 24.0000 15.0000 19.4535
50.0000 2.5000 0.0000 50.0000 3.1736 0.5854 1.0000
50.0000 2.5000 0.0000 50.0000 3.2972 0.0000 1.0000
50.0000 2.5000 0.0000 50.0000 1.8634 0.5757 1.0000
50.0000 2.5000 0.0000 50.0000 3.2592 0.3350 1.0000
60.2574 -34.0099 36.2677 60.4626 -34.1751 39.4387 1.2644
63.0109 -31.0961 -5.8663 62.8187 -29.7946 -4.0864 1.2630
61.2901 3.7196 -5.3901 61.4292 2.2480 -4.9620 1.8731
35.0831 -44.1164 3.7933 35.0232 -40.0716 1.5901 1.8645
22.7233 20.0904 -46.6940 23.0331 14.9730 -42.5619 2.0373
36.4612 47.8580 18.3852 36.2715 50.5065 21.2231 1.4146
90.8027 -2.0831 1.4410 91.1528 -1.6435 0.0447 1.4441
90.9257 -0.5406 -0.9208 88.6381 -0.8985 -0.7239 1.5381
6.7747 -0.2908 -2.4247 5.8714 -0.0985 -2.2286 0.6377
2.0776 0.0795 -1.1350 0.9033 -0.0636 -0.5514 0.9082"""
FINE = LABEL_COLOURS[:20]
# the palette's smallest ΔE00 between two of the 20 fine labels' colours, measured: the floor a change must keep
MEASURED_MINIMUM = {"normal": 12.55, "protanopia": 11.66, "deuteranopia": 11.56, "tritanopia": 12.31}


def test_ciede2000_gives_the_34_published_test_pairs_to_four_decimals():
    pairs = np.array([[float(x) for x in row.split()] for row in SHARMA_2005.splitlines()])
    assert pairs.shape == (34, 7)
    got = ciede2000(pairs[:, :3], pairs[:, 3:6])
    assert np.round(got, 4).tolist() == pairs[:, 6].tolist()
    assert np.allclose(ciede2000(pairs[:, 3:6], pairs[:, :3]), got)  # symmetric


def test_srgb_to_cielab_and_the_simulations_keep_white_and_black():
    assert np.allclose(lab(hex_to_rgb(["#ffffff", "#000000"])), [[100, 0, 0], [0, 0, 0]], atol=1e-3)
    assert np.allclose(lab(hex_to_rgb(["#ff0000"]))[0], [53.24, 80.09, 67.20], atol=0.01)  # sRGB red, D65
    for vision in MACHADO_2009:
        assert np.allclose(lab(hex_to_rgb(["#ffffff", "#000000"]), vision), [[100, 0, 0], [0, 0, 0]], atol=0.1)
    # the red-green pair every chart warns about: far apart in normal vision, close without L or M cones
    red_green = hex_to_rgb(["#cc3333", "#668800"])
    normal = ciede2000(*lab(red_green))
    assert normal > 40 and ciede2000(*lab(red_green, "deuteranopia")) < normal / 3


@pytest.mark.parametrize("vision", VISIONS)
def test_any_two_fine_label_colours_are_far_apart_in_every_vision(vision):
    smallest, pair = closest_pair(list(FINE), vision)
    assert smallest >= 10, f"{pair} are {smallest:.2f} apart in CIEDE2000 ({vision})"
    assert smallest >= MEASURED_MINIMUM[vision] - 0.01, (vision, smallest, pair)
    page = ciede2000(lab(hex_to_rgb(FINE), vision), lab(hex_to_rgb(["#ffffff"]), vision))
    assert page.min() >= 10  # every bar stands out from the white page


def test_every_label_colour_carries_readable_text():
    assert len(set(LABEL_COLOURS)) == len(LABEL_COLOURS)
    assert all(contrast(colour, text_colour(colour)) >= 4.5 for colour in LABEL_COLOURS)


def test_the_palette_is_what_the_max_min_choice_gives_from_the_documented_candidates():
    candidates = candidate_colours()
    fine = max_min_palette(candidates, 20, avoid=("#ffffff",))
    assert tuple(fine) == FINE
    assert tuple(max_min_palette(candidates, 12, avoid=("#ffffff", *fine))) == LABEL_COLOURS[20:]


def test_the_max_min_choice_takes_the_farthest_colours_first():
    assert max_min_palette(["#000000", "#111111", "#ffffff", "#ff0000"], 2) == ["#000000", "#ffffff"]
