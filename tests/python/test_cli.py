"""The optboost command: fit, predict, demo, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import optboost
import polars as pl
import pytest
from optboost.cli import main, read_data
from support import regression_frame


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "train.parquet"
    regression_frame().write_parquet(path)
    return path


def test_fit_then_predict(data_file, tmp_path, capsys):
    model_path = tmp_path / "model.json"
    code = main(
        [
            "fit",
            str(data_file),
            "y ~ a + b + s",
            "--n-iter",
            "20",
            "--learning-rate",
            "0.2",
            "--param",
            "max_depth=2",
            "-p",
            "min_samples_leaf=3",
            "-o",
            str(model_path),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "20 iterations" in out and str(model_path) in out
    model = optboost.load(model_path)
    assert model.params["max_depth"] == "2" and model.params["learning_rate"] == "0.2"

    predictions_path = tmp_path / "predictions.parquet"
    assert main(["predict", str(model_path), str(data_file), "-o", str(predictions_path)]) == 0
    predictions = pl.read_parquet(predictions_path)
    assert predictions.columns == ["prediction"]
    np.testing.assert_array_equal(
        predictions["prediction"].to_numpy(), model.predict(pl.read_parquet(data_file))
    )


def test_predict_to_stdout_as_csv_with_kept_columns(data_file, tmp_path, capsys):
    model_path = tmp_path / "model.json"
    main(["fit", str(data_file), "y ~ a", "--n-iter", "3", "-q", "-o", str(model_path)])
    capsys.readouterr()
    assert main(["predict", str(model_path), str(data_file), "--keep", "s"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "s,prediction" and len(lines) == 401
    # The thread count does not change a prediction.
    one_thread = ["predict", str(model_path), str(data_file), "--keep", "s", "--n-threads", "1"]
    assert main(one_thread) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_csv_data_and_validation_file(tmp_path, capsys):
    train, valid = tmp_path / "train.csv", tmp_path / "valid.csv"
    regression_frame().write_csv(train)
    regression_frame(seed=3).write_csv(valid)
    model_path = tmp_path / "m.json"
    assert (
        main(
            [
                "fit",
                str(train),
                "y ~ a + b",
                "--valid",
                str(valid),
                "--early-stopping-rounds",
                "3",
                "--n-iter",
                "30",
                "-o",
                str(model_path),
            ]
        )
        == 0
    )
    assert "valid loss" in capsys.readouterr().out
    assert json.loads(model_path.read_text())["history"]["valid_loss"][0] is not None


def test_errors_are_reported_without_traceback(data_file, tmp_path, capsys):
    model_path = str(tmp_path / "m.json")
    assert main(["fit", str(data_file), "y ~ a + missing_column", "-o", model_path]) == 1
    err = capsys.readouterr().err
    assert "'missing_column'" in err and "Traceback" not in err
    assert main(["fit", str(data_file), "y ~ a", "--method", "nope", "-o", model_path]) == 1
    assert "gbm" in capsys.readouterr().err
    assert main(["fit", str(data_file), "y ~ a", "-p", "max_dept=2", "-o", model_path]) == 1
    assert "max_depth" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "nothing.parquet"), "y ~ a", "-o", model_path]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["predict", str(data_file), str(data_file)]) == 1
    assert "model file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fit", str(data_file), "y ~ a", "-p", "no_equals_sign", "-o", model_path])


def test_predict_with_missing_column_names_it(data_file, tmp_path, capsys):
    model_path = tmp_path / "m.json"
    main(["fit", str(data_file), "y ~ a + s", "--n-iter", "2", "-q", "-o", str(model_path)])
    other = tmp_path / "other.parquet"
    regression_frame().drop("s").write_parquet(other)
    assert main(["predict", str(model_path), str(other)]) == 1
    assert "'s'" in capsys.readouterr().err


def test_demo_prints_a_comparison_table_and_saves_a_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    out_dir = tmp_path / "new" / "dir"  # created on demand
    assert main(["demo", "--rows", "2000", "--output-dir", str(out_dir)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("method"))
    for column in ("loss", "trees", "train loss", "valid loss", "test MAE", "stopped", "seconds"):
        assert column in header
    assert "\ngbm " in out
    assert (out_dir / "optboost-demo.png").stat().st_size > 1000


def test_demo_without_matplotlib_says_which_install_gives_the_picture(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    assert main(["demo", "--rows", "400", "--output-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert 'pip install "optboost[plot]"' in out and "optboost-demo.png" in out
    assert not (tmp_path / "optboost-demo.png").exists()


def test_fit_refuses_a_model_file_name_that_is_not_json(data_file, tmp_path, capsys):
    target = tmp_path / "m.txt"
    assert main(["fit", str(data_file), "y ~ a + b", "-o", str(target), "-q"]) == 1
    err = capsys.readouterr().err
    assert "saved as JSON" in err and "m.txt" in err
    assert not target.exists()


@pytest.mark.parametrize("command", ["fit", "cv"])
def test_method_option_lists_the_methods(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--method METHOD boosting method: gbm, rgbm, agbm" in help_text
    assert all(name in help_text for name in optboost.method_names())


def test_console_script_entry_point():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from optboost.cli import main; sys.exit(main())",
            "--version",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and result.stdout.startswith("optboost ")


@pytest.mark.parametrize("kind", ["response", "class", "contrib"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet", None])
def test_predict_writes_a_label_utf8_cannot_encode_escaped(kind, suffix, tmp_path, capsys):
    # JSON can spell a lone surrogate (\ud800), which Python loads and UTF-8 cannot encode.
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({"a": rng.normal(size=200), "k": rng.choice(["p", "q", "r"], 200)})
    data = tmp_path / "data.parquet"
    frame.write_parquet(data)
    model_path = tmp_path / "model.json"
    optboost.boost("k ~ a", frame, loss="softmax", n_iter=3, progress=False).save(model_path)
    text = model_path.read_text()
    assert text.count('"q"') == 1
    model_path.write_text(text.replace('"q"', '"q\\ud800"'))
    model = optboost.load(model_path)
    assert model.classes == ["p", "q\ud800", "r"]

    output = [] if suffix is None else ["-o", str(tmp_path / f"out{suffix}")]
    assert main(["predict", str(model_path), str(data), "--type", kind, *output]) == 0
    if suffix is None:
        written = pl.read_csv(capsys.readouterr().out.encode())
    else:
        written = read_data(str(tmp_path / f"out{suffix}"))
    escaped = "q\\ud800"  # the six characters q \ u d 8 0 0
    if kind == "class":
        labels = model.predict(frame, type="class")
        expected = [escaped if label == "q\ud800" else label for label in labels]
        assert written["class"].to_list() == expected and escaped in expected
    elif kind == "response":
        assert written.columns == ["probability_p", f"probability_{escaped}", "probability_r"]
        np.testing.assert_allclose(
            written.to_numpy(), model.predict(frame), rtol=1e-12 if suffix != ".csv" else 1e-9
        )
    else:
        assert f"{escaped}/a" in written.columns and f"{escaped}/bias" in written.columns
