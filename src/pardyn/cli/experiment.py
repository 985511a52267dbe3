"""``pardyn experiment NAME``: the control experiments of the papers, on the MuJoCo plant.

* ``dualv_tracking`` (:mod:`pardyn.experiments.tracking`): Briot et al. 2015, section 5.4,
  Table 4: max tracking errors of PD vs computed torque (nominal and identified parameters);
* ``rrr3_robustness`` (:mod:`pardyn.experiments.robustness`): Zubizarreta et al. 2010,
  section 4.8: ISE, IAE, ITAE of the classical and extended CTC vs parameter errors (1-5 %);
* ``wu_redundancy`` (:mod:`pardyn.experiments.wu_redundancy`): Wu et al. 2009, section 5,
  Figs. 2-3: driving forces of the redundant and non-redundant machines along the paper's motion.
* ``h4_pfc_vs_ctc`` (:mod:`pardyn.experiments.h4`): Vivas & Poignet 2003, section 5:
  predictive functional control vs computed torque on the H4 (tracking, 4 kg load, 50 % mismatch).
* ``ur5e_calibration`` (:mod:`pardyn.experiments.ur5e_calibration`): UR5e paper, sections 3-5:
  base parameter counts, identification with and without rotor dynamics compensation on the
  flexible-joint plant, NMSE of CAD vs calibrated models on three held-out trajectories.
* ``estimators`` (:mod:`pardyn.experiments.estimator_comparison`): the registered estimators (IDIM-WLS, -OLS, -IV, DIDIM) on the DualV and
  the UR5e as the torque noise grows and the derivative filter is mistuned (UR5e paper, section 1).
* ``estimator_benchmark`` (:mod:`pardyn.experiments.estimator_benchmark`): Monte Carlo draws of the
  measurement noise at three levels on the DualV, the Delta and the UR5e; every estimator's
  parameter error against the plant's truth, held-out torque error, failures and time, ranked.
* ``online_identification`` (:mod:`pardyn.experiments.online_identification`): the windowed online
  estimate follows a payload attached mid-run on the DualV; the CTC takes the estimate (blended swap).
* ``delta_pick_and_place`` (:mod:`pardyn.experiments.delta_pick_and_place`): the standard
  25/305/25 mm cycle on the Delta, PD vs CTC (simplified model), with and without payload,
  peak torques vs limits, exact vs simplified model torques.
* ``hexapod_identification`` (:mod:`pardyn.experiments.hexapod_identification`): record,
  identify (known payload), validate on a held-out bag, CTC with the nominal vs identified model.

Each is a plug-in of :data:`pardyn.experiments.registry.EXPERIMENTS` (one module of :mod:`pardyn.experiments`);
its flags are generated from its ``Options`` (:func:`pardyn.cli.options.add_option_arguments`). Each writes
``<out>/<name>.json`` (figures, options, whether the paper's claim held in
this run) and PNG plots, and prints a summary.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pardyn.cli.console import add_verbose_argument, node_log
from pardyn.cli.engine import add_engine_arguments, engine_from_arguments
from pardyn.cli.options import add_option_arguments, option_values
from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon, experiment_options, load_experiments
from pardyn.registry import options_from, refuse_unread

__all__ = ["EXPERIMENTS", "add_arguments", "run"]

HELP = "run an experiment of the papers (see the list of names); writes <out>/<name>.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    experiments = load_experiments()  # imports every experiment, and with them the plants
    parser.add_argument("name", choices=experiments.names, metavar="NAME",
                        help="; ".join(f"{name}: {experiments.get(name).summary}" for name in experiments))
    parser.add_argument("--out", type=Path, default=Path("experiments"), help="output directory (default experiments)")
    add_engine_arguments(parser, workers_help="parallel runs (default: one per core)")
    add_option_arguments(parser, experiment_options())  # each experiment's Options: --templates, --draws...
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    add_verbose_argument(parser)


def run(args: argparse.Namespace) -> int:
    experiment = EXPERIMENTS.get(args.name)
    given = option_values(args, experiment_options())
    refuse_unread(args.name, given, experiment_options(), "experiment")
    options = options_from(experiment.Options, given)
    common = ExperimentCommon(workers=args.workers, show_progress=not args.quiet)
    with node_log(args.out / f"{args.name}.log", verbose=args.verbose):
        if args.scheduler is None:
            report = experiment.run(args.out, options, common)
        else:  # every map of the experiment on that scheduler
            with engine_from_arguments(args):
                report = experiment.run(args.out, options, common)
    experiment.show(report, args.out)
    print(f"paper claim: {report['paper_claim']}")
    definition = report["claim_definition"]
    if isinstance(definition, dict):  # one definition per finding
        definition = "; ".join(f"{finding}: {text}" for finding, text in definition.items())
    print(f"claim held in this run: {report['claim_held']} ({definition})")
    print(f"wrote {args.out / (args.name + '.json')} and {', '.join(report['plots'])}")
    return 0
