"""ONNX's own backend test runner (onnx.backend.test.BackendTest, onnx 1.22.0, whose wheel carries the node,
simple and pytorch-* test data) against minirt.backend.

A ratchet, like tests/conformance/expected_pass.txt: every test named in onnx_backend_expected_pass.txt must pass;
the others run as non-strict xfail (an XPASS is a new pass: add it with
`MINIRT_BACKEND_UPDATE=1 python3 -m pytest python/tests/test_onnx_backend.py`, which rewrites the list with every
passing test; the list only grows). The real-model tests (downloads) are left out."""
import onnx.backend.test

import minirt.backend

backend_test = onnx.backend.test.BackendTest(minirt.backend, __name__)
for _name, _case in backend_test.test_cases.items():
    if _name != "OnnxBackendRealModelTest":
        globals()[_name] = _case
del _name, _case


def test_the_ratchet_list_names_only_tests_that_exist():
    from conftest import read_expected

    names = {m for cls in backend_test.test_cases.values() for m in dir(cls) if m.startswith("test_")}
    unknown = sorted(read_expected() - names)
    assert not unknown, f"onnx_backend_expected_pass.txt names tests the runner does not have: {unknown[:10]}"
    assert len(read_expected()) > 1500, "the list lost its entries"
