"""What a finished session did, read back from its records.

:mod:`~langmarl.p2p.analysis.analyze` builds a ``SessionAnalysis``
(:mod:`~langmarl.p2p.analysis.models`) from the per-run learning trends
(:mod:`~langmarl.p2p.analysis.dynamics`), and :mod:`~langmarl.p2p.analysis.narrative` says it
in a few sentences.
"""
