"""How far apart two colours look: CIEDE2000 in CIELAB, for normal vision and the three dichromacies.

The label colours of the pages (``faina.analysis.span_html.LABEL_COLOURS``) are chosen and checked with this:

- sRGB (IEC 61966-2-1) to CIE XYZ (D65) to CIELAB (CIE 15:2004, D65 white).
- ΔE00, the CIEDE2000 colour difference (CIE 142-2001), written from the formula as Sharma, Wu and Dalal state
  it ("The CIEDE2000 color-difference formula: implementation notes, supplementary test data, and mathematical
  observations", Color Research and Application 30(1), 2005), with kL = kC = kH = 1; their 34 test pairs are in
  the tests. About 1 is a just-noticeable difference; two label boxes 10 apart are told apart at a glance.
- Protanopia, deuteranopia and tritanopia simulated with the severity-1.0 matrices of Machado, Oliveira and
  Fernandes ("A physiologically-based model for simulation of color vision deficiency", IEEE TVCG 15(6), 2009),
  applied to linear sRGB and clipped to the gamut.
- ``max_min_palette``: a greedy max-min choice over candidate colours (the next colour is the candidate whose
  smallest ΔE00 to those chosen, under every vision, is largest), then swaps while they raise the worst case.
  ``candidate_colours`` is the set the label colours were chosen from: a 16-level sRGB grid, without the darkest
  and lightest colours (L* outside 25–92: a thin bar of them reads as text or as the page) and the greys
  (C* under 25).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

VISIONS = ("normal", "protanopia", "deuteranopia", "tritanopia")
MACHADO_2009 = {
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}
SRGB_TO_XYZ = ((0.4124564, 0.3575761, 0.1804375), (0.2126729, 0.7151522, 0.0721750), (0.0193339, 0.1191920, 0.9503041))
D65_WHITE = (0.95047, 1.0, 1.08883)


def hex_to_rgb(colours: Sequence[str]) -> np.ndarray:
    """``#rrggbb`` strings as sRGB values in [0, 1], shape ``[N, 3]``."""
    return np.array([[int(c.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)] for c in colours], dtype=float)


def rgb_to_hex(rgb: np.ndarray) -> list[str]:
    return ["#" + "".join(f"{round(float(v) * 255):02x}" for v in row) for row in np.clip(rgb, 0, 1)]


def linear(rgb: np.ndarray) -> np.ndarray:
    """sRGB's transfer function undone."""
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def lab_of_linear(linear_rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of linear sRGB values ``[N, 3]``."""
    xyz = linear_rgb @ np.array(SRGB_TO_XYZ).T / np.array(D65_WHITE)
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def lab(rgb: np.ndarray, vision: str = "normal") -> np.ndarray:
    """CIELAB of sRGB values ``[N, 3]`` as seen with ``vision`` (one of ``VISIONS``)."""
    values = linear(np.asarray(rgb, dtype=float))
    if vision != "normal":
        values = np.clip(values @ np.array(MACHADO_2009[vision]).T, 0, 1)
    return lab_of_linear(values)


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """ΔE00 between CIELAB colours (arrays ``[..., 3]`` that broadcast), kL = kC = kH = 1."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=float), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=float), -1, 0)
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean**7 / (c_mean**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.where((a1p == 0) & (b1 == 0), 0.0, np.degrees(np.arctan2(b1, a1p)) % 360)
    h2p = np.where((a2p == 0) & (b2 == 0), 0.0, np.degrees(np.arctan2(b2, a2p)) % 360)
    chroma_product = c1p * c2p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(chroma_product == 0, 0.0, dh)
    dL, dC = L2 - L1, c2p - c1p
    dH = 2 * np.sqrt(chroma_product) * np.sin(np.radians(dh / 2))
    L_mean, cp_mean = (L1 + L2) / 2, (c1p + c2p) / 2
    h_sum = h1p + h2p
    h_mean = np.where(np.abs(h1p - h2p) <= 180, h_sum / 2, np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2))
    h_mean = np.where(chroma_product == 0, h_sum, h_mean)
    t = (
        1
        - 0.17 * np.cos(np.radians(h_mean - 30))
        + 0.24 * np.cos(np.radians(2 * h_mean))
        + 0.32 * np.cos(np.radians(3 * h_mean + 6))
        - 0.20 * np.cos(np.radians(4 * h_mean - 63))
    )
    d_theta = 30 * np.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(cp_mean**7 / (cp_mean**7 + 25.0**7))
    s_l = 1 + 0.015 * (L_mean - 50) ** 2 / np.sqrt(20 + (L_mean - 50) ** 2)
    s_c = 1 + 0.045 * cp_mean
    s_h = 1 + 0.015 * cp_mean * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    return np.sqrt((dL / s_l) ** 2 + (dC / s_c) ** 2 + (dH / s_h) ** 2 + r_t * (dC / s_c) * (dH / s_h))


def candidate_colours(levels: int = 16, lightness: tuple[float, float] = (25, 92), chroma: float = 25) -> list[str]:
    """The sRGB grid of ``levels`` values per channel, kept where L* is within ``lightness`` and C* ≥ ``chroma``."""
    steps = np.linspace(0, 1, levels)
    grid = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), axis=-1).reshape(-1, 3)
    values = lab(grid)
    keep = (
        (values[:, 0] >= lightness[0])
        & (values[:, 0] <= lightness[1])
        & (np.hypot(values[:, 1], values[:, 2]) >= chroma)
    )
    return rgb_to_hex(grid[keep])


def pairwise(colours: Sequence[str], vision: str = "normal") -> np.ndarray:
    """ΔE00 of every pair of ``colours`` (``#rrggbb``) seen with ``vision``, ``[N, N]``."""
    values = lab(hex_to_rgb(colours), vision)
    return ciede2000(values[:, None, :], values[None, :, :])


def closest_pair(colours: Sequence[str], vision: str = "normal") -> tuple[float, tuple[str, str]]:
    """The smallest ΔE00 between two of ``colours`` seen with ``vision``, and that pair."""
    distances = pairwise(colours, vision)
    distances[np.diag_indices(len(colours))] = np.inf
    i, j = np.unravel_index(np.argmin(distances), distances.shape)
    return float(distances[i, j]), (colours[i], colours[j])


def max_min_palette(candidates: Sequence[str], size: int, avoid: Sequence[str] = (), rounds: int = 10) -> list[str]:
    """``size`` of ``candidates`` chosen so that the smallest ΔE00 between two of them (and to each colour of
    ``avoid``, such as the page's background), under every vision of ``VISIONS``, is as large as a greedy choice and
    swaps of one colour at a time make it."""
    labs = np.stack([lab(hex_to_rgb(list(candidates) + list(avoid)), v) for v in VISIONS])  # [V, N + A, 3]
    n = len(candidates)

    def distance_to(index: int) -> np.ndarray:  # worst case over the visions, to every candidate: [N + A]
        return ciede2000(labs[:, index : index + 1, :], labs).min(axis=0)

    fixed = [n + k for k in range(len(avoid))]
    chosen: list[int] = []
    nearest = np.full(n + len(avoid), np.inf)
    for index in fixed:
        nearest = np.minimum(nearest, distance_to(index))
    for _ in range(size):
        pick = int(np.argmax(np.where(np.isin(np.arange(n + len(avoid)), chosen + fixed), -np.inf, nearest)[:n]))
        chosen.append(pick)
        nearest = np.minimum(nearest, distance_to(pick))
    rows = {index: distance_to(index) for index in chosen + fixed}
    for _ in range(rounds):
        improved = False
        for slot in range(len(chosen)):
            others = [rows[i] for k, i in enumerate(chosen) if k != slot] + [rows[i] for i in fixed]
            nearest_others = np.min(others, axis=0)
            current = nearest_others[chosen[slot]]
            taken = set(chosen) | set(fixed)
            scores = np.where(np.isin(np.arange(n), list(taken)), -np.inf, nearest_others[:n])
            best = int(np.argmax(scores))
            if scores[best] > current + 1e-9:
                chosen[slot] = best
                rows[best] = distance_to(best)
                improved = True
        if not improved:
            break
    return [candidates[i] for i in chosen]
