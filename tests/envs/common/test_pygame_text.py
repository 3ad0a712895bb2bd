"""pygame's text in C++ (native/envs/common/pygame_text.h) against pygame itself, pixel for pixel.

Gymnasium draws text in two envs: CarRacing-v3 renders its score with pygame's default font,
``pygame.font.Font(pygame.font.get_default_font(), 42).render("%04i" % reward, True, white, black)``
(antialiased with a background: SDL_ttf's "shaded" mode, an 8-bit palette surface), blitted into the
frame its 96x96 observation is scaled from; Blackjack-v1 renders its labels with Gymnasium's
``Minecraft.ttf`` at ``screen_height // 15`` and ``// 6`` (33 and 83) without a background ("blended": a
per-pixel-alpha surface) and blits them onto its green table. The native side runs through the test
hooks ``_testing.pygame_text(font_path, size, text, fg, bg)`` (the surface as RGBA, what
``pygame.image.tobytes(surface, "RGBA")`` holds), ``_testing.pygame_text_blit(...)`` and
``_testing.pygame_alpha_blend(src_rgba, dst_rgb)``. Every comparison is **exact** (no tolerance): sizes,
every pixel's colour and alpha. The oracle is the installed upstream pygame 2.6.1 (the ``test`` extra),
whose manylinux wheel bundles SDL2_ttf 2.20.1, FreeType 2.12.1 and HarfBuzz 5.1.
"""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import gymnasium  # noqa: E402
import pygame  # noqa: E402

import parallel_pool  # noqa: E402
from parallel_pool import _testing  # noqa: E402

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
BLACKJACK_GREEN = (7, 99, 36)
# The font the package installs (from pygame's sdist at build time) and pygame's own copy.
FREESANSBOLD = str(Path(parallel_pool.__file__).parent / "fonts" / "freesansbold.ttf")
PYGAME_FREESANSBOLD = str(Path(pygame.__file__).parent / pygame.font.get_default_font())
MINECRAFT = str(Path(gymnasium.__file__).parent / "envs" / "toy_text" / "font" / "Minecraft.ttf")
# Kerning pairs (freesansbold's 'kern' table), its GSUB ligatures (fi, fl, IJ, ij), spaces, punctuation.
SPECIAL = ["0000", "1111", "AVAWAY To Ty", "fi fl IJ ij office Wolf", "  ", " x ", "~!@#$%^&*()_+{}|:<>?", "-.-,"]

_pygame_fonts: dict[tuple[str, int], pygame.font.Font] = {}


@pytest.fixture(scope="module", autouse=True)
def _pygame_font() -> None:
    pygame.font.init()


def pygame_font(path: str, size: int) -> pygame.font.Font:
    if (path, size) not in _pygame_fonts:
        _pygame_fonts[(path, size)] = pygame.font.Font(path, size)
    return _pygame_fonts[(path, size)]


def pygame_render(path: str, size: int, text: str, fg: tuple[int, int, int], bg: tuple[int, int, int] | None):
    font = pygame_font(path, size)
    return font.render(text, True, fg, bg) if bg is not None else font.render(text, True, fg)


def pygame_rgba(surface: pygame.Surface) -> np.ndarray:
    w, h = surface.get_size()
    return np.frombuffer(pygame.image.tobytes(surface, "RGBA"), np.uint8).reshape(h, w, 4)


def assert_same_text(
    path: str, size: int, text: str, fg: tuple[int, int, int], bg: tuple[int, int, int] | None, ours_path: str = ""
) -> None:
    expected = pygame_rgba(pygame_render(path, size, text, fg, bg))
    actual = _testing.pygame_text(ours_path or path, size, text, fg, bg)
    assert actual.shape == expected.shape, (path, size, text)
    if not np.array_equal(actual, expected):
        bad = np.argwhere((actual != expected).any(axis=-1))
        raise AssertionError(f"{Path(path).name} {size} {text!r} bg={bg}: {len(bad)} pixels differ, first {bad[0]}")


def score_strings() -> list[str]:
    """Every string CarRacing's "%04i" % reward gives for rewards in [-100, 1000] (it truncates toward
    zero, so rewards in (-1, 1) give "0000"): each digit in each position, the minus sign in front of
    one to three digits."""
    strings = {"%04i" % r for r in np.arange(-100.0, 1000.0 + 1e-9, 0.25)}  # noqa: UP031 (car_racing.py's own)
    assert len(strings) == 1101 and {"-100", "-012", "-001", "0000", "0931", "1000"} <= strings
    return sorted(strings)


def test_the_reference_is_upstream_pygame_2_6_1_with_sdl_ttf_2_20_1() -> None:
    assert not getattr(pygame, "IS_CE", False), "pygame-ce replaced pygame: reinstall pygame==2.6.1"
    assert pygame.version.ver == "2.6.1"
    assert pygame.font.get_sdl_ttf_version() == (2, 20, 1)


def test_the_installed_font_is_pygames_default_font() -> None:
    """freesansbold.ttf comes from pygame 2.6.1's sdist at build time: the bytes pygame's wheel has."""
    ours = Path(FREESANSBOLD).read_bytes()
    assert ours == Path(PYGAME_FREESANSBOLD).read_bytes()
    assert hashlib.sha256(ours).hexdigest() == "bf9251269f11e4b35582a99376096deee3d0c4973a459cbd97b0bebc01f440ad"


def test_carracing_scores_exactly() -> None:
    for text in score_strings():
        assert_same_text(PYGAME_FREESANSBOLD, 42, text, WHITE, BLACK, ours_path=FREESANSBOLD)


def test_carracing_score_blitted_where_carracing_puts_it() -> None:
    """text_rect.center = (60, WINDOW_H - WINDOW_H * 2.5 / 40.0) on the 1000x800 surface, over a
    coloured background (the text is shaded: its black box covers what is under it)."""
    rng = np.random.default_rng(0)
    background = rng.integers(0, 256, size=(800, 1000, 3), dtype=np.uint8)
    for text in ["-100", "-012", "-001", "0000", "0123", "0931", "1000", "0456", "0789"]:
        surface = pygame.Surface((1000, 800))
        pygame.surfarray.blit_array(surface, background.transpose(1, 0, 2))
        rendered = pygame_render(PYGAME_FREESANSBOLD, 42, text, WHITE, BLACK)
        rect = rendered.get_rect()
        rect.center = (60, 800 - 800 * 2.5 / 40.0)
        # Rect's center setter: x = cx - w / 2, y = cy - h / 2 in C ints (what CarRacing's C++ computes).
        assert (rect.x, rect.y) == (60 - rect.w // 2, 750 - rect.h // 2)
        surface.blit(rendered, rect)
        expected = pygame.surfarray.array3d(surface).transpose(1, 0, 2)
        actual = _testing.pygame_text_blit(FREESANSBOLD, 42, text, WHITE, BLACK, background, rect.x, rect.y)
        np.testing.assert_array_equal(actual, expected, err_msg=text)


def blackjack_strings() -> list[tuple[int, str]]:
    """What Blackjack-v1's render() draws: the dealer's shown card (1-10) and "Player" at
    screen_height // 15, the player's sum at screen_height // 6, "usable ace" at // 15."""
    small, large = 500 // 15, 500 // 6
    out = [(small, f"Dealer: {v}") for v in range(1, 12)] + [(small, "Player"), (small, "usable ace")]
    return out + [(large, str(v)) for v in range(1, 32)]


def test_blackjack_labels_exactly() -> None:
    assert (500 // 15, 500 // 6) == (33, 83)
    for size, text in blackjack_strings():
        assert_same_text(MINECRAFT, size, text, WHITE, None)


def test_blackjack_labels_blitted_onto_its_table() -> None:
    """Blended text (per-pixel alpha) over Blackjack's green and over a random background, at in-surface
    and clipped positions: pygame's alpha blit."""
    rng = np.random.default_rng(1)
    green = np.broadcast_to(np.array(BLACKJACK_GREEN, np.uint8), (500, 600, 3)).copy()
    noise = rng.integers(0, 256, size=(500, 600, 3), dtype=np.uint8)
    positions = [(25, 25), (25, 237), (300 - 40, 300), (-10, -8), (580, 480)]
    for background in (green, noise):
        for (size, text), (x, y) in zip(blackjack_strings(), positions * 10):
            surface = pygame.Surface((600, 500))
            pygame.surfarray.blit_array(surface, background.transpose(1, 0, 2))
            surface.blit(pygame_render(MINECRAFT, size, text, WHITE, None), (x, y))
            expected = pygame.surfarray.array3d(surface).transpose(1, 0, 2)
            actual = _testing.pygame_text_blit(MINECRAFT, size, text, WHITE, None, background, x, y)
            np.testing.assert_array_equal(actual, expected, err_msg=f"{text} at {(x, y)}")


@pytest.mark.parametrize("font", ["freesansbold", "minecraft"])
def test_random_printable_ascii_both_modes(font: str) -> None:
    path = PYGAME_FREESANSBOLD if font == "freesansbold" else MINECRAFT
    ours = FREESANSBOLD if font == "freesansbold" else MINECRAFT
    rng = random.Random(font)
    cases = [(size, text) for size in (42, 33, 83) for text in SPECIAL]
    for _ in range(150):
        text = "".join(chr(rng.randint(0x20, 0x7E)) for _ in range(rng.randint(1, 16)))
        cases.append((rng.choice([6, 9, 12, 16, 20, 27, 33, 42, 55, 64, 83, 100]), text))
    for size, text in cases:
        fg = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        bg = rng.choice([None, (rng.randrange(256), rng.randrange(256), rng.randrange(256))])
        assert_same_text(path, size, text, fg, bg, ours_path=ours)
        assert_same_text(path, size, text, fg, None if bg is not None else BLACK, ours_path=ours)


def test_random_text_blits_in_both_modes() -> None:
    rng = random.Random(2)
    for _ in range(40):
        path, ours = rng.choice([(PYGAME_FREESANSBOLD, FREESANSBOLD), (MINECRAFT, MINECRAFT)])
        size = rng.choice([12, 33, 42, 83])
        text = "".join(chr(rng.randint(0x20, 0x7E)) for _ in range(rng.randint(1, 10)))
        fg = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        bg = rng.choice([None, (rng.randrange(256), rng.randrange(256), rng.randrange(256))])
        fill = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        x, y = rng.randint(-60, 150), rng.randint(-40, 90)
        surface = pygame.Surface((160, 100))
        surface.fill(fill)
        surface.blit(pygame_render(path, size, text, fg, bg), (x, y))
        expected = pygame.surfarray.array3d(surface).transpose(1, 0, 2)
        background = np.broadcast_to(np.array(fill, np.uint8), (100, 160, 3))
        actual = _testing.pygame_text_blit(ours, size, text, fg, bg, background, x, y)
        np.testing.assert_array_equal(actual, expected, err_msg=f"{text!r} {size} {bg} at {(x, y)}")


def test_alpha_blend_matches_pygame_for_every_source_destination_and_alpha() -> None:
    """The blended blit's per-channel formula, for all 256**3 (source, destination, alpha) triples in
    each channel: a per-pixel-alpha surface (what font.render without a background returns) blitted
    onto a default 32-bit surface."""
    side = 4096  # 4096 * 4096 == 256 ** 3
    s, d, a = (v.reshape(side, side).astype(np.uint8) for v in np.meshgrid(*[np.arange(256)] * 3, indexing="ij"))
    src_rgba = np.stack([s, 255 - s, s, a], axis=-1)
    dst_rgb = np.stack([d, d, 255 - d], axis=-1)
    source = pygame.Surface((side, side), pygame.SRCALPHA, 32)
    pygame.surfarray.pixels3d(source)[...] = src_rgba[..., :3].transpose(1, 0, 2)
    pygame.surfarray.pixels_alpha(source)[...] = a.T
    target = pygame.Surface((side, side))
    pygame.surfarray.blit_array(target, dst_rgb.transpose(1, 0, 2))
    target.blit(source, (0, 0))
    expected = pygame.surfarray.array3d(target).transpose(1, 0, 2).reshape(-1, 3)
    actual = _testing.pygame_alpha_blend(src_rgba.reshape(-1, 4), dst_rgb.reshape(-1, 3))
    np.testing.assert_array_equal(actual, expected)


def test_text_it_does_not_reproduce_is_refused() -> None:
    with pytest.raises(ValueError, match="printable ASCII"):
        _testing.pygame_text(MINECRAFT, 33, "caf\u00e9", WHITE, None)
    with pytest.raises(ValueError, match="printable ASCII"):
        _testing.pygame_text(MINECRAFT, 33, "two\nlines", WHITE, None)
    with pytest.raises(ValueError, match="empty"):
        _testing.pygame_text(MINECRAFT, 33, "", WHITE, None)
    with pytest.raises(RuntimeError, match="cannot load"):
        _testing.pygame_text("/nonexistent/font.ttf", 33, "x", WHITE, None)
