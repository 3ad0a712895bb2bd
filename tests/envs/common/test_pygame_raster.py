"""The C++ raster (native/envs/common/pygame_raster.h) against pygame itself, pixel for pixel.

Gymnasium's Box2D ``render()`` draws with ``pygame.draw`` (polygon, line, lines, aaline, aalines,
circle; and MPE's, a circle's one-pixel outline), ``pygame.gfxdraw`` (aapolygon, filled_polygon:
SDL2_gfx; classic control's aacircle, filled_circle, hline, vline too) and ``pygame.transform.flip``
on a default ``pygame.Surface`` (32-bit, no alpha). The native side runs through the test hook
``_testing.pygame_raster(width, height, ops, flip_y, x0, out_width)``; every case draws the same ops
on a pygame surface and the frames must be **equal** (no tolerance): random polygons and lines with
float coordinates as the envs pass them, degenerate (repeated points, zero length, one row), off the
surface, huge and tiny, drawn over each other so that the anti-aliased primitives blend with what is
underneath. The oracle is the installed pygame (the ``test`` extra's ``pygame>=2.1.3``; checked with 2.6.1).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402
from pygame import gfxdraw  # noqa: E402

from parallel_pool import _testing  # noqa: E402

Op = tuple[str, tuple[int, int, int], list[tuple[float, float]], Any]

# circle_outline last, so that the others keep their seeds (PRIMITIVES.index).
PRIMITIVES = [
    "polygon", "line", "lines", "closed_lines", "aaline", "aalines", "circle", "aapolygon", "filled_polygon",
    "circle_outline",
]


def test_the_reference_is_upstream_pygame_2_6_1() -> None:
    """What gymnasium[box2d] installs, and what pygame_raster.h reproduces. pygame-ce (which
    minigrid requires: the README installs minigrid with --no-deps) draws differently."""
    assert not getattr(pygame, "IS_CE", False), "pygame-ce replaced pygame: reinstall pygame==2.6.1"
    assert pygame.version.ver == "2.6.1"


def pygame_frame(width: int, height: int, ops: list[Op], flip_y: bool = False) -> np.ndarray:
    """The same ops drawn by pygame, as Gymnasium's render() returns a surface."""
    surf = pygame.Surface((width, height))
    for name, color, points, arg in ops:
        if name == "fill":
            surf.fill(color)
        elif name == "polygon":
            pygame.draw.polygon(surf, color, points, arg)
        elif name == "line":
            pygame.draw.line(surf, color, points[0], points[1], arg)
        elif name == "lines":
            pygame.draw.lines(surf, color, False, points, arg)
        elif name == "closed_lines":
            pygame.draw.lines(surf, color, True, points, arg)
        elif name == "aaline":
            pygame.draw.aaline(surf, color, points[0], points[1])
        elif name == "aalines":
            pygame.draw.aalines(surf, color, arg, points)
        elif name == "circle":
            pygame.draw.circle(surf, color, points[0], arg)
        elif name == "circle_outline":  # MPE's entity borders
            pygame.draw.circle(surf, color, points[0], arg, 1)
        elif name == "aapolygon":
            gfxdraw.aapolygon(surf, points, color)
        elif name == "filled_polygon":
            gfxdraw.filled_polygon(surf, points, color)
        elif name == "aacircle":
            gfxdraw.aacircle(surf, int(points[0][0]), int(points[0][1]), arg, color)
        elif name == "filled_circle":
            gfxdraw.filled_circle(surf, int(points[0][0]), int(points[0][1]), arg, color)
        elif name == "hline":
            gfxdraw.hline(surf, int(points[0][0]), int(points[1][0]), int(points[0][1]), color)
        elif name == "vline":
            gfxdraw.vline(surf, int(points[0][0]), int(points[0][1]), int(points[1][1]), color)
        elif name == "aa_filled_polygon":  # one native call (CarRacing's polygons)
            gfxdraw.aapolygon(surf, points, color)
            gfxdraw.filled_polygon(surf, points, color)
        else:
            raise ValueError(name)
    if flip_y:
        surf = pygame.transform.flip(surf, False, True)
    return np.transpose(np.array(pygame.surfarray.pixels3d(surf)), axes=(1, 0, 2))


def random_points(rng: np.random.Generator, n: int, width: int, height: int) -> list[tuple[float, float]]:
    """Points mostly on or near the surface, sometimes far off it, integral, repeated or tiny."""
    reach = float(rng.choice([1.5, 1.5, 4.0, 40.0, 400.0]))
    lo = 0.5 - reach / 2
    pts = [(float(rng.uniform(lo, lo + reach) * width), float(rng.uniform(lo, lo + reach) * height)) for _ in range(n)]
    kind = rng.random()
    if kind < 0.15:
        pts = [(float(round(x)), float(round(y))) for x, y in pts]
    elif kind < 0.25 and n > 1:
        pts[1] = pts[0]  # a repeated vertex / zero-length segment
    elif kind < 0.3:
        pts = [(x, pts[0][1]) for x, _ in pts]  # all on one row
    elif kind < 0.35:
        pts = [(float(rng.uniform(0, 1)), float(rng.uniform(0, 1))) for _ in range(n)]  # within one pixel
    return pts


def random_color(rng: np.random.Generator) -> tuple[int, int, int]:
    return (int(rng.integers(256)), int(rng.integers(256)), int(rng.integers(256)))


def random_op(rng: np.random.Generator, name: str, width: int, height: int) -> Op:
    color = random_color(rng)
    if name in ("line", "aaline"):
        return (name, color, random_points(rng, 2, width, height), int(rng.choice([1, 1, 2, 3, 6])))
    if name in ("circle", "circle_outline"):
        return (name, color, random_points(rng, 1, width, height), float(rng.uniform(0, max(width, height))))
    if name in ("lines", "closed_lines", "aalines"):
        arg: Any = bool(rng.integers(2)) if name == "aalines" else int(rng.choice([1, 1, 2, 5]))
        return (name, color, random_points(rng, int(rng.integers(2, 8)), width, height), arg)
    width_arg = int(rng.choice([0, 0, 0, 1, 2, 4])) if name == "polygon" else 0
    return (name, color, random_points(rng, int(rng.integers(3, 9)), width, height), width_arg)


def random_canvas(rng: np.random.Generator, max_width: int, max_height: int) -> tuple[int, int, list[Op]]:
    """A random size below (max_width, max_height), and its first op: a fill of a random color."""
    width, height = int(rng.integers(1, max_width)), int(rng.integers(1, max_height))
    return width, height, [("fill", random_color(rng), [], 0)]


def assert_raster_is_pygames(case: int, width: int, height: int, ops: list[Op]) -> None:
    """Our raster of ``ops`` is pygame's frame, pixel for pixel; else the test fails, naming the case,
    how many pixels differ and the first."""
    expected = pygame_frame(width, height, ops)
    actual = _testing.pygame_raster(width, height, ops)
    if not np.array_equal(actual, expected):
        where = np.argwhere((actual != expected).any(axis=-1))
        pytest.fail(f"case {case}: {len(where)} pixels differ, first at (row, col) {where[0].tolist()}: {ops}")


@pytest.mark.parametrize("name", PRIMITIVES)
def test_primitive_matches_pygame(name: str) -> None:
    rng = np.random.default_rng(PRIMITIVES.index(name))
    for case in range(80):
        width, height, ops = random_canvas(rng, 70, 50)
        ops += [random_op(rng, name, width, height) for _ in range(6)]
        assert_raster_is_pygames(case, width, height, ops)


def test_mixed_scene_flipped_and_cropped_matches_pygame() -> None:
    """All primitives over each other, read back flipped and cropped as BipedalWalker's render does."""
    rng = np.random.default_rng(99)
    for _ in range(20):
        width, height = int(rng.integers(40, 200)), int(rng.integers(20, 120))
        ops: list[Op] = [("fill", (215, 215, 255), [], 0)]
        ops += [random_op(rng, str(rng.choice(PRIMITIVES)), width, height) for _ in range(25)]
        expected = pygame_frame(width, height, ops, flip_y=True)
        out_width = int(rng.integers(1, width + 1))
        x0 = width - out_width
        actual = _testing.pygame_raster(width, height, ops, True, x0, out_width)
        np.testing.assert_array_equal(actual, expected[:, x0:])


def test_aa_filled_polygon_is_aapolygon_then_filled_polygon() -> None:
    """raster::GfxAaFilledPolygon (CarRacing draws every polygon with it) leaves out the outline's
    blends that the fill overwrites: the frame must be pygame's aapolygon then filled_polygon, over
    backgrounds and each other, polygons off the surface, across its edges, huge, degenerate, and
    with more vertices than the fill keeps on the stack (16)."""
    rng = np.random.default_rng(7)
    for case in range(300):
        width, height, ops = random_canvas(rng, 90, 70)
        for _ in range(int(rng.integers(1, 7))):
            color = random_color(rng)
            n = int(rng.choice([3, 4, 4, 4, 5, 8, 17, 30]))
            name = str(rng.choice(["aa_filled_polygon", "aa_filled_polygon", "filled_polygon", "aapolygon"]))
            ops.append((name, color, random_points(rng, n, width, height), 0))
        assert_raster_is_pygames(case, width, height, ops)


def test_writes_kept_to_rows_draw_those_rows_as_pygame() -> None:
    """Surface::KeepWritesIn (CarRacing's world leaves out the rows its indicator band covers): the
    rows kept are pygame's frame, pixel for pixel; the others keep what they held."""
    rng = np.random.default_rng(8)
    names = ["aa_filled_polygon", "filled_polygon", "aapolygon", "polygon", "lines", "aaline"]
    for case in range(150):
        width, height = int(rng.integers(1, 80)), int(rng.integers(2, 60))
        first = int(rng.integers(-2, height))
        end = int(rng.integers(first + 1, height + 3))
        background = random_color(rng)
        ops: list[Op] = [random_op(rng, str(rng.choice(names)), width, height) for _ in range(6)]
        expected = pygame_frame(width, height, [("fill", background, [], 0), *ops])
        keep: Op = ("keep_rows", (0, 0, 0), [], (first, end))
        actual = _testing.pygame_raster(width, height, [("fill", background, [], 0), keep, *ops])
        kept = slice(max(first, 0), min(end, height))
        assert np.array_equal(actual[kept], expected[kept]), (case, first, end, ops)
        outside = np.ones(height, dtype=bool)
        outside[kept] = False
        assert (actual[outside] == background).all(), (case, first, end, ops)


def test_int16_coordinates_of_gfxdraw_wrap_as_in_sdl2_gfx() -> None:
    """gfxdraw takes Sint16 coordinates: 65537.7 lands on x = 1, as pygame draws it."""
    ops: list[Op] = [
        ("aapolygon", (255, 0, 0), [(65537.7, 1.9), (65537.7, 6.9), (65538.0, 6.9)], 0),
        ("filled_polygon", (0, 255, 0), [(65540.0, 1.0), (65545.0, 8.0), (65538.0, 8.0)], 0),
    ]
    np.testing.assert_array_equal(_testing.pygame_raster(12, 10, ops), pygame_frame(12, 10, ops))
    ops = [("aa_filled_polygon", (0, 0, 255), [(65537.7, 1.9), (-65530.2, 8.9), (65546.0, 6.9)], 0)]
    np.testing.assert_array_equal(_testing.pygame_raster(12, 10, ops), pygame_frame(12, 10, ops))


def test_gfxdraw_circles_and_lines_match_pygame() -> None:
    """gfxdraw's aacircle, filled_circle (classic control's joints, wheels and axles: an aacircle,
    then a filled_circle on it), hline and vline: integer centres on, across and off the surface,
    radii from 0 (one pixel) to wider than the surface, over backgrounds and each other."""
    rng = np.random.default_rng(41)
    names = ["aacircle", "filled_circle", "aa_then_filled", "hline", "vline"]
    for case in range(300):
        width, height, ops = random_canvas(rng, 90, 70)
        for _ in range(int(rng.integers(1, 8))):
            color = random_color(rng)
            ends = [(float(rng.integers(-width, 2 * width + 1)), float(rng.integers(-height, 2 * height + 1)))
                    for _ in range(2)]
            radius = int(rng.choice([0, 1, 2, 5, 8, 11, int(rng.integers(0, 2 * max(width, height) + 2))]))
            name = str(rng.choice(names))
            if name == "aa_then_filled":
                ops += [("aacircle", color, ends[:1], radius), ("filled_circle", color, ends[:1], radius)]
            else:
                ops.append((name, color, ends, radius))
        assert_raster_is_pygames(case, width, height, ops)


def test_unknown_primitive_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown primitive"):
        _testing.pygame_raster(4, 4, [("ellipse", (1, 2, 3), [(0.0, 0.0)], 0)])


@pytest.mark.parametrize("seed", [0, 1])
def test_smoothscale_matches_pygame(seed: int) -> None:
    """pygame.transform.smoothscale (pygame's default x86-64 "SSE" filters): CarRacing's sizes
    (1000 x 800 to 96 x 96 and to 600 x 400), then random shrinks and expansions, noisy and flat."""
    if pygame.transform.get_smoothscale_backend() != "SSE":
        pytest.skip("the native smoothscale reproduces pygame's x86-64 default backend, SSE")
    rng = np.random.default_rng(seed)
    cases = [(1000, 800, 96, 96), (1000, 800, 600, 400)] if seed == 0 else []
    cases += [tuple(int(v) for v in rng.integers(1, 200, 4)) for _ in range(60)]
    for width, height, out_width, out_height in cases:
        image = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        if rng.random() < 0.3:
            image[:] = image[:1, :1]  # one colour: the averages must give it back
        surf = pygame.Surface((width, height))
        pygame.surfarray.pixels3d(surf)[:] = image.transpose(1, 0, 2)
        scaled = pygame.transform.smoothscale(surf, (out_width, out_height))
        expected = np.transpose(pygame.surfarray.array3d(scaled), (1, 0, 2))
        actual = _testing.pygame_smoothscale(image, out_width, out_height)
        assert np.array_equal(actual, expected), (width, height, out_width, out_height)
        for simd in ("avx2", "sse2"):
            narrower = _testing.pygame_smoothscale(image, out_width, out_height, simd=simd)
            assert np.array_equal(narrower, expected), (width, height, out_width, out_height, simd)


def test_smoothscale_shrinks_of_every_size_match_pygame() -> None:
    """Every shrink of up to 40 pixels along each axis, with each code the CPU has: AVX-512 (rows
    two at a time in masked loads of eight pixels), AVX2 (rows in chunks of four pixels, the last
    masked, columns four at a time) and SSE2: where each output's pixels start and end, the last
    chunk against a line's end, fewer outputs than asked (pygame leaves the rest), columns not a
    multiple of four. Some images repeat rows (the shrink along rows copies the outputs of two rows
    equal to the two before)."""
    if pygame.transform.get_smoothscale_backend() != "SSE":
        pytest.skip("the native smoothscale reproduces pygame's x86-64 default backend, SSE")
    rng = np.random.default_rng(3)
    for n in range(2, 41):
        for m in range(1, n):
            for width, height, out_width, out_height in ((n, 3, m, 3), (7, n, 7, m), (n, n, m, m)):
                image = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
                if rng.random() < 0.5:  # rows drawn from a few, so that runs and pairs of equal rows occur
                    image = image[rng.integers(0, min(3, height), height)]
                surf = pygame.Surface((width, height))
                pygame.surfarray.pixels3d(surf)[:] = image.transpose(1, 0, 2)
                scaled = pygame.transform.smoothscale(surf, (out_width, out_height))
                expected = np.transpose(pygame.surfarray.array3d(scaled), (1, 0, 2))
                for simd in ("auto", "avx2", "sse2"):
                    actual = _testing.pygame_smoothscale(image, out_width, out_height, simd=simd)
                    assert np.array_equal(actual, expected), (width, height, out_width, out_height, simd)


def test_span_fills_write_exactly_their_pixels() -> None:
    """The fills under every filled span (64-byte stores with masked ends, 32-byte ones, or
    std::fill_n, as the CPU allows): each writes its pixels and no other, at every alignment."""
    for simd in ("auto", "avx2", "sse2"):
        for start in range(0, 40):
            for count in (0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 100):
                actual = _testing.raster_fill_pixels(200, start, count, 0xA1B2C3, simd=simd)
                expected = np.zeros(200, dtype=np.uint32)
                expected[start : start + count] = 0xA1B2C3
                assert np.array_equal(actual, expected), (simd, start, count)


def test_rotate_rad_matches_pygame_vector2() -> None:
    """pygame.math.Vector2.rotate_rad (CarRacing turns every vertex with it): quarter turns within
    pygame's epsilon are exact swaps, any other angle goes through sin and cos."""
    rng = np.random.default_rng(0)
    points = [(float(x), float(y)) for x, y in rng.uniform(-500, 500, (50, 2))]
    quarter = np.pi / 2
    angles = [0.0, -0.0, quarter, -quarter, np.pi, 3 * quarter, 2 * np.pi, 4 * np.pi, -7 * quarter, 1e-7, -1e-7]
    angles += [k * quarter + d for k in range(-4, 5) for d in (-2e-6, -9e-7, 9e-7, 2e-6)]
    angles += [float(a) for a in rng.uniform(-20, 20, 40)]
    for angle in angles:
        expected = np.array([tuple(pygame.math.Vector2(p).rotate_rad(angle)) for p in points])
        actual = _testing.pygame_rotate_rad(points, angle)
        assert np.array_equal(actual, expected), angle
