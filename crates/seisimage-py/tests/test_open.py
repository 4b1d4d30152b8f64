"""`open` and `info` read what segyio, an independent reader, reads from the shipped F3 cut."""

import numpy as np
import segyio

import seisimage


def test_open_matches_segyio(f3):
    image = seisimage.open(f3)
    with segyio.open(str(f3), "r") as f:
        cube = segyio.tools.cube(f)
        ilines, xlines, samples = list(f.ilines), list(f.xlines), list(f.samples)
        scalar = f.header[0][segyio.TraceField.SourceGroupScalar]
        cdp = {
            (h[segyio.TraceField.INLINE_3D], h[segyio.TraceField.CROSSLINE_3D]): (
                h[segyio.TraceField.CDP_X],
                h[segyio.TraceField.CDP_Y],
            )
            for h in f.header
        }
        text = f.text[0].decode("ascii", "replace")
    assert image.dims == ("iline", "xline", "twt")
    assert image.dtype == np.float32
    np.testing.assert_array_equal(image.values, cube)
    assert list(image.iline.values) == ilines
    assert list(image.xline.values) == xlines
    np.testing.assert_allclose(image.twt.values, samples)
    assert image.attrs["sample_interval"] == samples[1] - samples[0]
    assert image.attrs["sample_unit"] == "ms"
    assert bool(image.live.all())
    # The coordinates are the survey's affine fit: within a metre of every trace's header.
    factor = 1.0 / abs(scalar) if scalar < 0 else float(scalar or 1)
    for (il, xl), (x, y) in cdp.items():
        assert abs(float(image.cdp_x.sel(iline=il, xline=xl)) - x * factor) < 1.0
        assert abs(float(image.cdp_y.sel(iline=il, xline=xl)) - y * factor) < 1.0
    assert image.attrs["text_header"].split()[:3] == text.split()[:3]


def test_info_is_info_json(f3):
    with segyio.open(str(f3), "r") as f:
        cube = segyio.tools.cube(f)
        n_traces = f.tracecount
    described = seisimage.info(f3)
    g = described["geometry"]
    assert described["schema"] == "seisimage-info/1"
    assert described["container"] == "segy"
    assert (g["ilines"]["count"], g["xlines"]["count"], g["samples"]["count"]) == cube.shape
    assert g["traces"] == n_traces
    assert described["amplitudes"]["max"] == float(cube.max())
    assert described["amplitudes"]["min"] == float(cube.min())
    assert described["segy"]["text"] == ""
    assert seisimage.info(f3, text_header=True, stats=False)["segy"]["text"] != ""


def test_reading_keys_are_the_input_tables(f3):
    # Inline and crossline numbers read from each other's bytes: the axes swap.
    swapped = seisimage.open(f3, iline_byte=193, xline_byte=189)
    image = seisimage.open(f3)
    assert list(swapped.iline.values) == list(image.xline.values)
    np.testing.assert_array_equal(swapped.values, image.values.transpose(1, 0, 2))
