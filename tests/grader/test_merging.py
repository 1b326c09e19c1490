"""Shards by a stable hash of the student id, and merges that refuse what would mix grades:
missing or repeated shards, other labs, devices, limits or grader versions, stale records,
students graded twice. The folders here are written directly (no grading), except the last test,
which grades one lab in two shards and merges them."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest
from grader_corpus import REFERENCE, Entry, stub_with

from grader.cli import main
from grader.hidden import registry
from grader.trusted import gradebook
from grader.trusted.grading import Options, grade, in_shard
from grader.trusted.merging import MergeError, merge
from grader.trusted.sandbox import Limits

SETTINGS = {"code": "c0de", "limits": {"wall_s": 3}, "device": "cpu", "labs": ["17.01"]}


def folder(root: Path, name: str, students: list[str], *, shard=None, config="cfg",
           **settings) -> Path:
    """A grading folder as ``grade`` leaves it: run.json and one complete record each."""
    out = root / name
    (out / "records").mkdir(parents=True)
    gradebook.write_run(out, {"settings": {**SETTINGS, **settings}, "config": config,
                              "shard": shard, "students": students})
    for student in students:
        gradebook.atomic_write_json(gradebook.record_path(out, student), {
            "student_id": student, "complete": True, "config": config, "labs": {},
            "messages": [], "status": "ok"})
    return out


def refused(sources, out) -> str:
    with pytest.raises(MergeError) as error:
        merge(sources, out)
    message = str(error.value)
    assert message.startswith("[es] ") and "\n[en] " in message  # both languages
    return message


def test_shards_split_by_a_stable_hash_of_the_id():
    ids = [f"student{i:03d}" for i in range(60)]
    shards = {i: {s for s in ids if in_shard(s, (i, 3))} for i in range(3)}
    assert set().union(*shards.values()) == set(ids)
    assert sum(len(s) for s in shards.values()) == len(ids)  # each id in exactly one shard
    assert all(len(s) >= 10 for s in shards.values())
    # a submission added between jobs moves nobody else (by position, half of them would move)
    for i in range(3):
        assert {s for s in ["aaa-new", *ids] if in_shard(s, (i, 3))} - {"aaa-new"} == shards[i]


def test_complete_shards_merge(tmp_path):
    a = folder(tmp_path, "s0", ["ana", "bea"], shard=[0, 2])
    b = folder(tmp_path, "s1", ["carlos"], shard=[1, 2])
    assert merge([a, b], tmp_path / "all") == 3
    run = gradebook.load_run(tmp_path / "all")
    assert run["students"] == ["ana", "bea", "carlos"] and run["settings"] == SETTINGS
    rows = (tmp_path / "all" / "grades.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["max_points", "ana", "bea", "carlos"]


def test_a_missing_or_repeated_shard_is_refused(tmp_path):
    shards = [folder(tmp_path, f"s{i}", [f"st{i}"], shard=[i, 3]) for i in range(3)]
    assert "Shards missing: 2/3" in refused(shards[:2], tmp_path / "out")
    again = folder(tmp_path, "s1-again", ["other"], shard=[1, 3])
    assert "Shard 1/3 is given twice" in refused([*shards, again], tmp_path / "out")
    other_split = folder(tmp_path, "t0", ["x"], shard=[0, 4])
    assert "not shards of one split" in refused([shards[1], shards[2], other_split],
                                                 tmp_path / "out")


@pytest.mark.parametrize(("key", "value", "said"), [
    ("labs", ["17.00", "17.01", "17.02"], "different the labs (--lab)"),
    ("device", "cuda", "different the device (--device)"),
    ("limits", {"wall_s": 10}, "different the limits"),
    ("code", "0ther", "different the grader's version"),
])
def test_other_settings_are_refused(tmp_path, key, value, said):
    a = folder(tmp_path, "a", ["ana"])
    b = folder(tmp_path, "b", ["bea"], config="other", **{key: value})
    assert said in refused([a, b], tmp_path / "out")


def test_stale_incomplete_and_duplicated_folders_are_refused(tmp_path):
    a = folder(tmp_path, "a", ["ana", "bea"])
    stale = folder(tmp_path, "stale", ["carlos"])
    record = gradebook.load_record(stale, "carlos")
    gradebook.atomic_write_json(gradebook.record_path(stale, "carlos"),
                                {**record, "config": "older"})
    assert "graded with other settings than its last run (carlos)" in refused(
        [a, stale], tmp_path / "out")
    unfinished = folder(tmp_path, "unfinished", ["dora", "eva"])
    gradebook.record_path(unfinished, "eva").unlink()
    said = refused([a, unfinished], tmp_path / "out")
    assert "1 of 2 students are not graded (eva)" in said
    assert "quedan 1 de 2 estudiantes sin corregir (eva)" in said
    twice = folder(tmp_path, "twice", ["bea"])
    assert "bea is in both" in refused([a, twice], tmp_path / "out")
    assert "is not a grading folder" in refused([a, tmp_path / "nowhere"], tmp_path / "out")
    busy = folder(tmp_path, "busy", ["zoe"])
    assert "already holds other students (zoe)" in refused([a], busy)


def test_the_command_line_says_why_and_exits_2(tmp_path, capsys):
    a = folder(tmp_path, "s0", ["ana"], shard=[0, 2])
    assert main(["merge", str(a), "--out", str(tmp_path / "all")]) == 2
    error = capsys.readouterr().err
    assert "Faltan partes del reparto: 1/2." in error and "Shards missing: 1/2." in error
    assert not (tmp_path / "all").exists()  # nothing written


def test_two_real_shards_merge_into_the_one_run(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for entry in [Entry("ana", REFERENCE), Entry("bea", stub_with(None, None)),
                  Entry("carlos", REFERENCE.replace("offset : offset + T", "0 : T"))]:
        entry.build(subs)
    limits = Limits(wall_s=5, cpu_s=6)
    outs = []
    with redirect_stderr(io.StringIO()):
        for shard in [None, (0, 2), (1, 2)]:
            out = tmp_path / f"out-{shard[0] if shard else 'all'}"
            grade(subs, out, Options(workers=1, device="cpu", shard=shard, limits=limits,
                                     labs=["17.01"], progress=False), stream=io.StringIO())
            outs.append(out)
    whole, *shards = outs
    run = json.loads((shards[0] / "run.json").read_text())
    assert run["shard"] == [0, 2] and run["settings"]["labs"] == ["17.01"]
    assert run["settings"]["device"] == "cpu"
    assert sorted(run["students"]) == sorted(s for s in ["ana", "bea", "carlos"]
                                              if in_shard(s, (0, 2)))
    assert merge(shards, tmp_path / "merged") == 3
    assert (tmp_path / "merged" / "grades.csv").read_text() == \
        (whole / "grades.csv").read_text()
    full = folder(tmp_path, "full-run", ["dora"], labs=sorted(registry()))
    assert "different the labs (--lab)" in refused([whole, full], tmp_path / "mixed")
