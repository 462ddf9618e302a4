"""What `langmarl runs show` adds for a language run, as the language kind's typed
`details` entry point returns it (trainer/run_files.py)."""

from pathlib import Path

from trainer_fakes import AGENTS, make_parts

from langmarl.store.catalog import describe
from langmarl.trainer import MonteCarloTrainer
from langmarl.trainer.run_files import LanguageDetails, language_details


def test_details_hold_the_newest_policies_and_their_diffs(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=1, validate_updates=False)
    MonteCarloTrainer(cfg, env, critic, opt, callbacks=[]).train()
    run = tmp_path / "runs" / "test"

    details = language_details(run)

    assert isinstance(details, LanguageDetails)
    assert (details.iterations, details.diff_from, details.diff_to) == ([0, 1], 0, 1)
    assert list(details.policies) == AGENTS
    assert all("+You are a careful agent." in details.diffs[a] for a in AGENTS)
    shown = describe(run).details  # the catalog merges the typed details as plain fields
    assert shown["policies"] == details.policies and shown["diff_to"] == 1


def test_a_run_without_checkpoints_has_empty_details(tmp_path: Path) -> None:
    (tmp_path / "fresh").mkdir()
    assert language_details(tmp_path / "fresh") == LanguageDetails()
