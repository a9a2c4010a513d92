"""Helpers shared by the test modules (and ``bench/``), imported by name: ``from support.rawrpc
import RawServer``. ``tests/`` is on ``sys.path`` through pytest's ``pythonpath`` setting
(pyproject ``[tool.pytest.ini_options]``); scripts outside pytest insert it themselves.

Fixtures stay in ``tests/conftest.py``; what is here is plain code with no pytest state.
"""
