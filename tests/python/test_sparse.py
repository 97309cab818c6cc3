"""scipy.sparse input to the scikit-learn estimators: CSR, CSC and the formats scipy converts
fit the model of the same matrix dense, bit for bit, and predict the same bits; bad sparse
input is refused with a DataError naming the problem."""

import numpy as np
import pytest

import optboost
from optboost.errors import DataError
from optboost.sklearn import BoostClassifier, BoostRegressor

sp = pytest.importorskip("scipy.sparse")


def random_sparse(seed, n_rows, n_columns, density):
    """A CSR matrix with explicit zeros (0.0 and -0.0), NaN, an all-zero column (1) and a
    column of stored zeros only (2)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_columns, density=density, format="csr", random_state=seed)
    X.data = np.round(rng.normal(size=X.nnz) * 10, 1)
    special = rng.random(X.nnz)
    X.data[special < 0.05] = np.nan
    X.data[(special >= 0.05) & (special < 0.1)] = 0.0
    X.data[(special >= 0.1) & (special < 0.15)] = -0.0
    X = X.tocsc()
    X.data[X.indptr[1] : X.indptr[2]] = 0.0  # stored, so columns 1 and 2 are zeros
    X.data[X.indptr[2] : X.indptr[3]] = 0.0
    return X.tocsr()


def target(X, seed):
    dense = np.nan_to_num(X.toarray(), nan=-1.0)
    noise = np.random.default_rng(seed).normal(size=X.shape[0]) * 0.1
    return dense[:, 0] + 0.5 * dense[:, 3] - 0.2 * dense[:, 4] * dense[:, 0] + noise


def fitted(model):
    """The model's file content except the timings of its history."""
    content = model.model_.to_dict()
    content["history"].pop("seconds", None)
    return content


def bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "seed,shape,density,settings",
    [
        (1, (3000, 8), 0.05, {}),
        (2, (1500, 40), 0.3, {"params": {"growth": "leafwise"}}),
        (3, (4000, 12), 0.01, {"method": "agbm", "validation_fraction": 0.2}),
        (4, (1200, 6), 0.6, {"loss": "absolute", "subsample": 0.7}),
    ],
)
def test_sparse_matrices_fit_and_predict_as_dense(seed, shape, density, settings):
    X = random_sparse(seed, *shape, density)
    y = target(X, seed)
    dense = BoostRegressor(n_iter=8, **settings).fit(X.toarray(), y)
    for layout in (X, X.tocsc(), X.tocoo()):
        model = BoostRegressor(n_iter=8, **settings).fit(layout, y)
        assert fitted(model) == fitted(dense), layout.format
        assert np.array_equal(bits(model.predict(layout)), bits(dense.predict(X.toarray())))
    # A dense model predicts a sparse matrix, and a sparse one a dense matrix, alike.
    assert np.array_equal(bits(dense.predict(X)), bits(model.predict(X.toarray())))


@pytest.mark.timeout(120)
def test_a_sparse_classifier_with_eval_set_is_the_dense_one():
    X = random_sparse(5, 2000, 10, 0.2)
    y = (target(X, 5) > 0).astype(int)
    Xv, yv = X[:500], y[:500]
    dense = BoostClassifier(n_iter=6).fit(X.toarray(), y, eval_set=(Xv.toarray(), yv))
    model = BoostClassifier(n_iter=6).fit(X, y, eval_set=(Xv, yv))
    assert fitted(model) == fitted(dense)
    assert np.array_equal(bits(model.predict_proba(X)), bits(dense.predict_proba(X.toarray())))


def test_sparse_arrays_are_read_without_a_dense_copy():
    # A sparse array (scipy's newer class) goes the same way as a matrix.
    X = random_sparse(6, 800, 5, 0.3)
    y = target(X, 6)
    model = BoostRegressor(n_iter=4).fit(sp.csr_array(X), y)
    assert fitted(model) == fitted(BoostRegressor(n_iter=4).fit(X, y))


def test_bad_sparse_input_is_refused_by_name():
    X = random_sparse(7, 300, 5, 0.3)
    y = target(X, 7)
    infinite = X.copy()
    infinite.data[3] = np.inf
    with pytest.raises(DataError, match="infinity"):
        BoostRegressor(n_iter=2).fit(infinite, y)
    # A CSC matrix whose row indices repeat or run backwards within a column.
    for indices, problem in (([0, 0, 2], "duplicate"), ([2, 0, 1], "unsorted")):
        bad = sp.csc_matrix(
            (np.array([1.0, 2.0, 3.0]), np.array(indices), np.array([0, 3, 3, 3, 3, 3])),
            shape=(300, 5),
        )
        with pytest.raises(DataError, match=problem):
            BoostRegressor(n_iter=2).fit(bad, y)
    model = BoostRegressor(n_iter=2).fit(X, y)
    with pytest.raises(ValueError, match="5 features"):
        model.predict(sp.random(10, 6, density=0.5, format="csr"))
    # int64 indices with a row index past the row count.
    past = sp.csc_matrix((300, 5))
    past.indices = np.array([300], dtype=np.int64)
    past.indptr = np.array([0, 1, 1, 1, 1, 1], dtype=np.int64)
    past.data = np.array([1.0])
    with pytest.raises(DataError, match="row index 300: not in 0..299"):
        BoostRegressor(n_iter=2).fit(past, y)


def test_the_input_matrix_is_not_modified():
    X = random_sparse(8, 500, 6, 0.2).tocsr()
    copy = X.copy()
    BoostRegressor(n_iter=3).fit(X, target(X, 8))
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(X, name), getattr(copy, name), equal_nan=name == "data")
