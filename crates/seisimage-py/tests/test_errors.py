"""Mistakes are JobError at their key and line, as the command line reports them with exit 2; failures
are RunError, as it reports them with exit 1."""

import json

import pytest

import seisimage
from conftest import DEMO_VELOCITY, run_command_line


def demo_job(f3, out_dir, dz="2.0"):
    return (
        "[input]\n"
        f'path = "{f3}"\n'
        "\n"
        "[velocity]\n"
        'kind = "constant"\n'
        "velocity = 1800.0\n"
        "\n"
        "[imaging]\n"
        f"dz = {dz}\n"
        "zmax = 200.0\n"
        "\n"
        "[output]\n"
        f'dir = "{out_dir}"\n'
        "inlines = [120]\n"
    )


def test_a_wrong_value_is_a_job_error_at_its_key_and_line(tmp_path, f3):
    job = tmp_path / "job.toml"
    job.write_text(demo_job(f3, tmp_path / "out", dz="-2.0"))
    with pytest.raises(seisimage.JobError) as raised:
        seisimage.validate(job)
    e = raised.value
    assert e.key == "imaging.dz"
    assert (e.line, e.exit_code) == (9, 2)
    assert e.source == str(job)
    cli = run_command_line("validate", job)
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"error: {e}"
    with pytest.raises(seisimage.JobError, match="imaging.dz"):
        seisimage.run(job)
    assert not (tmp_path / "out").exists()


def test_overrides_and_dict_jobs_are_checked_like_files(tmp_path, f3):
    job = tmp_path / "job.toml"
    job.write_text(demo_job(f3, tmp_path / "out"))
    with pytest.raises(seisimage.JobError) as raised:
        seisimage.validate(job, {"imaging.fmax": -5.0})
    assert raised.value.key == "imaging.fmax"
    assert "--set" in raised.value.source
    as_dict = {
        "input": {"path": str(f3)},
        "velocity": dict(DEMO_VELOCITY),
        "imaging": {"dz": 2.0, "zmax": 264.0, "deepest": 3.0},
        "output": {"dir": str(tmp_path / "out"), "inlines": [120]},
    }
    with pytest.raises(seisimage.JobError) as raised:
        seisimage.validate(as_dict)
    assert raised.value.key == "imaging.deepest"
    del as_dict["imaging"]["deepest"]
    plan = seisimage.validate(as_dict)
    assert plan["valid"] and plan["method"] == "phase-shift"
    assert plan["image"]["samples"]["last"] == 264.0


def test_migrate_names_the_imaging_key_at_fault(f3):
    with pytest.raises(seisimage.JobError) as raised:
        seisimage.migrate(seisimage.open(f3), velocity=1800.0, dz=0.0)
    assert raised.value.key == "imaging.dz"
    with pytest.raises(seisimage.JobError) as raised:
        seisimage.migrate(seisimage.open(f3), velocity={"kind": "constant"})
    assert raised.value.key == "velocity.kind"
    with pytest.raises(seisimage.JobError, match="dt_ms"):
        seisimage.migrate(seisimage.open(f3).values, velocity=1800.0, bin_m=25.0)


def test_a_damaged_file_is_a_run_error_naming_it(tmp_path, f3):
    damaged = tmp_path / "cut.sgy"
    damaged.write_bytes(f3.read_bytes()[:3600 + 240 + 100])
    with pytest.raises(seisimage.RunError) as raised:
        seisimage.open(damaged)
    assert raised.value.exit_code == 1
    assert str(damaged) in str(raised.value)
    cli = run_command_line("info", damaged)
    assert cli.returncode == 1
    assert cli.stderr.strip() == f"error: {raised.value}"


def test_the_manifest_of_a_run(tmp_path, f3):
    job = tmp_path / "job.toml"
    job.write_text(demo_job(f3, tmp_path / "out"))
    manifest = seisimage.run(job)
    on_disk = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest == on_disk
    names = {f["path"] for p in manifest["products"] for f in p["files"]}
    assert "inline_120.png" in names
