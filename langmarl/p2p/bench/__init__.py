"""Benchmarks: a session per case, scored by the case's check.

:mod:`~langmarl.p2p.bench.cases` holds the cases, their config and the summary;
:mod:`~langmarl.p2p.bench.run` runs them in one run directory.
"""
