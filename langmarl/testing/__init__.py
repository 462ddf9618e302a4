"""Test helpers shipped with langmarl: a scripted LLM for offline unit tests."""

from langmarl.testing.scripted import ScriptedBackend, ScriptedLLM, scripted_config

__all__ = ["ScriptedBackend", "ScriptedLLM", "scripted_config"]
