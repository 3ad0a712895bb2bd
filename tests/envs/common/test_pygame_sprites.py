"""The C++ sprite half of the raster (native/envs/common/png.h, pygame_raster.h) against pygame itself.

Gymnasium's toy-text envs draw their frames from PNG sprites: ``pygame.image.load``,
``pygame.transform.scale``, ``Surface.blit`` (per-pixel alpha, ``set_alpha``) and
``pygame.draw.rect``. Each is reproduced in C++ and compared here, pixel for pixel, with upstream
pygame 2.6.1 (the test extra's pin) through the ``_testing.png_decode`` and ``_testing.pygame_blit``
test hooks: every PNG Gymnasium ships, scale's pixel mapping over many sizes, and the blends over
every (source, alpha, destination) triple.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path
from typing import Any

import gymnasium.envs.toy_text
import numpy as np
import pytest

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402

from parallel_pool import _testing  # noqa: E402

IMG_DIR = Path(gymnasium.envs.toy_text.__file__).parent / "img"


def test_pygame_is_upstream_2_6_1() -> None:
    assert pygame.version.ver == "2.6.1" and not getattr(pygame, "IS_CE", False)


def pygame_rgba(surface: Any) -> np.ndarray:
    return np.frombuffer(pygame.image.tobytes(surface, "RGBA"), np.uint8).reshape(
        surface.get_height(), surface.get_width(), 4
    )


@pytest.mark.parametrize("name", sorted(p.name for p in IMG_DIR.glob("*.png")))
def test_png_decode_is_pygame_image_load(name: str) -> None:
    """Every sprite (RGBA; 2-, 4- and 8-bit palettes; a palette with translucent tRNS): the same
    pixels, and per-pixel alpha exactly where pygame's loaded surface has it."""
    alpha, rgba = _testing.png_decode(str(IMG_DIR / name))
    surface = pygame.image.load(str(IMG_DIR / name))
    assert alpha == bool(surface.get_flags() & pygame.SRCALPHA)
    expected = pygame_rgba(surface)
    if not alpha:
        assert (rgba[..., 3] == 255).all()
    np.testing.assert_array_equal(rgba, expected)


def write_png(
    path: Path,
    width: int,
    height: int,
    color_type: int,
    bit_depth: int,
    rows: list[bytes],
    palette: bytes = b"",
    trns: bytes | None = None,
) -> None:
    """A PNG whose rows use the five filters in turn (each row's bytes filtered as the spec says)."""
    bpp = max(1, {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type] * bit_depth // 8)

    def paeth(a: int, b: int, c: int) -> int:
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else (b if pb <= pc else c)

    raw = bytearray()
    previous = bytes(len(rows[0]))
    for y, line in enumerate(rows):
        kind = y % 5
        out = bytearray()
        for i, value in enumerate(line):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            predictor = [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]
            out.append((value - predictor) & 255)
        raw += bytes([kind]) + out
        previous = line

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0))
    if palette:
        data += chunk(b"PLTE", palette)
    if trns is not None:
        data += chunk(b"tRNS", trns)
    path.write_bytes(data + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))


PNG_KINDS = [
    # (colour type, bit depth, tRNS): grey, RGB, grey + alpha, RGBA; palettes of 1/2/4/8 bits, without
    # tRNS, with every entry opaque (no colour key: an opaque surface), translucent, two transparent.
    (0, 8, None),
    (2, 8, None),
    (4, 8, None),
    (6, 8, None),
    (3, 1, None),
    (3, 2, None),
    (3, 4, None),
    (3, 8, None),
    (3, 8, bytes([255] * 5)),
    (3, 4, bytes([255, 128, 0, 7])),
    (3, 2, bytes([0, 0])),
    (3, 8, bytes([200, 0, 0, 255])),
]


@pytest.mark.parametrize(("color_type", "bit_depth", "trns"), PNG_KINDS)
def test_png_decode_colour_types_and_filters(
    tmp_path: Path, color_type: int, bit_depth: int, trns: bytes | None
) -> None:
    rng = np.random.default_rng(color_type * 10 + bit_depth)
    width, height = 13, 11
    palette = b""
    if color_type == 3:
        palette = rng.integers(256, size=3 * (1 << bit_depth), dtype=np.uint8).tobytes()
        indices = rng.integers(1 << bit_depth, size=(height, width))
        per_byte = 8 // bit_depth
        rows = []
        for r in range(height):
            packed = bytearray()
            for start in range(0, width, per_byte):
                byte = 0
                for k, v in enumerate(indices[r, start : start + per_byte]):
                    byte |= int(v) << (8 - bit_depth * (k + 1))
                packed.append(byte)
            rows.append(bytes(packed))
    else:
        channels = {0: 1, 2: 3, 4: 2, 6: 4}[color_type]
        pixels = rng.integers(256, size=(height, width * channels), dtype=np.uint8)
        rows = [pixels[r].tobytes() for r in range(height)]
    path = tmp_path / "kind.png"
    write_png(path, width, height, color_type, bit_depth, rows, palette, trns)
    alpha, rgba = _testing.png_decode(str(path))
    surface = pygame.image.load(str(path))
    assert alpha == bool(surface.get_flags() & pygame.SRCALPHA)
    np.testing.assert_array_equal(rgba, pygame_rgba(surface))


def test_png_decode_refuses_a_palette_colour_key(tmp_path: Path) -> None:
    """One fully transparent index, the rest opaque: SDL_image makes a colour key, not reproduced."""
    write_png(tmp_path / "key.png", 2, 1, 3, 8, [bytes([0, 1])], bytes(6), bytes([255, 0]))
    with pytest.raises(RuntimeError, match="colour key"):
        _testing.png_decode(str(tmp_path / "key.png"))


def test_png_decode_refuses_what_it_does_not_reproduce(tmp_path: Path) -> None:
    (tmp_path / "not.png").write_bytes(b"GIF89a")
    with pytest.raises(RuntimeError, match="not a PNG"):
        _testing.png_decode(str(tmp_path / "not.png"))
    with pytest.raises(RuntimeError, match="cannot open"):
        _testing.png_decode(str(tmp_path / "missing.png"))
    # An interlaced PNG (pygame can load it; the decoder says it cannot rather than misdraw).
    data = bytearray((IMG_DIR / "elf_up.png").read_bytes())
    data[28] = 1  # IHDR's interlace byte (the CRC is not checked)
    (tmp_path / "interlaced.png").write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="interlaced"):
        _testing.png_decode(str(tmp_path / "interlaced.png"))


def as_pygame_sprite(rgba: np.ndarray, alpha: bool) -> Any:
    """With alpha, a surface like the one pygame.image.load makes of an RGBA PNG (RGBA bytes, R mask
    0xff); opaque, a default 32-bit pygame.Surface (what Taxi gives a surface alpha)."""
    h, w = rgba.shape[:2]
    if alpha:
        return pygame.image.frombuffer(np.ascontiguousarray(rgba).tobytes(), (w, h), "RGBA").copy()
    surface = pygame.Surface((w, h))
    pygame.surfarray.blit_array(surface, np.ascontiguousarray(rgba[..., :3].transpose(1, 0, 2)))
    return surface


def pygame_program(background: np.ndarray, ops: list[tuple[Any, ...]]) -> np.ndarray:
    """What _testing.pygame_blit draws, drawn by pygame on a default pygame.Surface."""
    h, w = background.shape[:2]
    surface = pygame.Surface((w, h))
    pygame.surfarray.blit_array(surface, background.transpose(1, 0, 2))
    for op in ops:
        if op[0] == "sprite":
            _, rgba, alpha, size, at, surface_alpha = op
            sprite = pygame.transform.scale(as_pygame_sprite(rgba, alpha), size)
            if surface_alpha != 255:
                sprite.set_alpha(surface_alpha)
            surface.blit(sprite, at)
        elif op[0] == "filled":
            _, color, size, at, surface_alpha = op
            cell = pygame.Surface(size)
            cell.set_alpha(surface_alpha)
            cell.fill(color)
            surface.blit(cell, at)
        else:
            _, color, rect, border = op
            pygame.draw.rect(surface, color, rect, border)
    return np.transpose(pygame.surfarray.array3d(surface), (1, 0, 2))


def check(background: np.ndarray, ops: list[tuple[Any, ...]]) -> None:
    ours = _testing.pygame_blit(background, ops)
    theirs = pygame_program(background, ops)
    if not np.array_equal(ours, theirs):
        where = np.argwhere((ours != theirs).any(axis=-1))
        pytest.fail(
            f"{len(where)} pixels differ, first at {where[0].tolist()}: {ours[tuple(where[0])]} vs "
            f"{theirs[tuple(where[0])]}"
        )


def test_per_pixel_alpha_blend_every_triple() -> None:
    """blit of a per-pixel-alpha sprite onto an opaque surface: every (source, alpha, destination)
    value, with the three channels carrying different values."""
    i = np.arange(1 << 24, dtype=np.uint32)
    s, a, d = (i >> 16) & 255, (i >> 8) & 255, i & 255
    rgba = np.stack([s, 255 - s, s // 3, a], -1).astype(np.uint8).reshape(4096, 4096, 4)
    background = np.stack([d, d // 2, 255 - d], -1).astype(np.uint8).reshape(4096, 4096, 3)
    check(background, [("sprite", rgba, True, (4096, 4096), (0, 0), 255)])


@pytest.mark.parametrize("surface_alpha", [0, 1, 2, 85, 127, 128, 129, 170, 254])
def test_surface_alpha_blends(surface_alpha: int) -> None:
    """set_alpha on a per-pixel-alpha sprite (Taxi's hotel: 170) and on an opaque surface (Taxi's
    stands: 128), every (source, destination) value; the per-pixel case at several alphas too."""
    i = np.arange(1 << 16, dtype=np.uint32)
    s, d = i >> 8, i & 255
    background = np.stack([d, d // 2, 255 - d], -1).astype(np.uint8).reshape(256, 256, 3)
    for pixel_alpha in (255, 200, 77, 1):
        rgba = np.stack([s, 255 - s, s // 3, np.full_like(s, pixel_alpha)], -1).astype(np.uint8).reshape(256, 256, 4)
        check(background, [("sprite", rgba, True, (256, 256), (0, 0), surface_alpha)])
    opaque = np.stack([s, 255 - s, s // 3, np.full_like(s, 255)], -1).astype(np.uint8).reshape(256, 256, 4)
    check(background, [("sprite", opaque, False, (256, 256), (0, 0), surface_alpha)])
    rng = np.random.default_rng(surface_alpha)
    for _ in range(5):
        color = tuple(int(c) for c in rng.integers(256, size=3))
        check(
            background,
            [("filled", color, (50, 40), (int(rng.integers(-30, 250)), int(rng.integers(-30, 250))), surface_alpha)],
        )


SCALE_SIZES = [
    (1, 1),
    (5, 3),
    (32, 32),
    (40, 40),
    (50, 50),
    (51, 51),
    (56, 56),
    (60, 60),
    (64, 64),
    (73, 101),
    (102, 144),
    (144, 102),
]


@pytest.mark.parametrize(("src_w", "src_h"), [(32, 32), (40, 40), (7, 13), (444, 616)])
def test_scale_is_pygame_transform_scale(src_w: int, src_h: int) -> None:
    """transform.scale's pixel mapping, shrinking and growing, opaque and with alpha, each source
    pixel distinct."""
    idx = np.arange(src_w * src_h, dtype=np.uint32)
    rgba = np.stack([idx & 255, (idx >> 8) & 255, (idx >> 16) & 255, 255 - (idx % 200)], -1)
    rgba = rgba.astype(np.uint8).reshape(src_h, src_w, 4)
    for size in [*SCALE_SIZES, (src_w, src_h)]:
        background = np.zeros((size[1], size[0], 3), np.uint8)
        check(background, [("sprite", rgba, False, size, (0, 0), 255)])
        check(background, [("sprite", rgba, True, size, (0, 0), 255)])


def test_gymnasium_sprites_scaled_and_blitted_off_the_edges() -> None:
    """Each shipped sprite loaded, scaled to the toy-text cell sizes, blitted at positions that clip
    on every side (CliffWalking's elf on row 0 starts 6 pixels above the window)."""
    rng = np.random.default_rng(0)
    background = rng.integers(256, size=(130, 170, 3), dtype=np.uint8)
    for path in sorted(IMG_DIR.glob("*.png"))[::3] + [IMG_DIR / "goal.png", IMG_DIR / "ice.png"]:
        alpha, rgba = _testing.png_decode(str(path))
        ops: list[tuple[Any, ...]] = []
        for size in [(50, 50), (60, 60), (64, 64), (51, 51), (102, 144)]:
            at = (int(rng.integers(-70, 160)), int(rng.integers(-70, 120)))
            ops.append(("sprite", rgba, alpha, size, at, 255))
        ops.append(("sprite", rgba, alpha, (60, 60), (0, -6), 255))
        check(background, ops)
        # The same through pygame.image.load itself (not only via the decoded pixels).
        loaded = pygame.transform.scale(pygame.image.load(str(path)), (51, 51))
        surface = pygame.Surface((170, 130))
        pygame.surfarray.blit_array(surface, background.transpose(1, 0, 2))
        surface.blit(loaded, (-7, 90))
        theirs = np.transpose(pygame.surfarray.array3d(surface), (1, 0, 2))
        np.testing.assert_array_equal(
            _testing.pygame_blit(background, [("sprite", rgba, alpha, (51, 51), (-7, 90), 255)]), theirs
        )


def test_draw_rect_outline_and_fill() -> None:
    """pygame.draw.rect inside the surface: 1-pixel frames (FrozenLake's cell borders), thicker ones,
    filled ones, degenerate sizes. A rect crossing the edge (pygame moves some clipped sides onto
    the edge) is refused, not misdrawn."""
    rng = np.random.default_rng(1)
    background = np.zeros((60, 80, 3), np.uint8)
    ops: list[tuple[Any, ...]] = []
    for _ in range(300):
        w, h = int(rng.integers(0, 60)), int(rng.integers(0, 50))
        x, y = int(rng.integers(0, 80 - w + 1)), int(rng.integers(0, 60 - h + 1))
        border = int(rng.choice([0, 1, 1, 1, 2, 3, 7, 30]))
        color = tuple(int(c) for c in rng.integers(256, size=3))
        ops.append(("rect", color, (x, y, w, h), border))
        check(background, ops[-1:])
    check(background, ops)
    for rect in [(-1, 5, 10, 10), (5, -1, 10, 10), (75, 5, 10, 10), (5, 55, 10, 10)]:
        with pytest.raises(ValueError, match="inside the surface"):
            _testing.pygame_blit(background, [("rect", (1, 2, 3), rect, 1)])
