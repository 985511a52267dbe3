"""Experiments: the papers' studies and pardyn's own, each one module, run by ``pardyn experiment``.

They run control laws on the plants (:mod:`pardyn.simulation`) and identify from recorded runs
(:mod:`pardyn.identification`), write JSON and plots, and say whether the paper's claim held.
"""
