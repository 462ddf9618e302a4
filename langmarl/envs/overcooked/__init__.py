"""Overcooked for language-space training: two cooks, skill-level text actions, +20 a soup.

The MDP is the ``overcooked`` package's ``OvercookedGridworld`` (pip extra ``games``); this
package adds the text (observations, skills), a BFS motion planner, a scripted greedy cook
and the :class:`~langmarl.envs.overcooked.env.OvercookedEnv` adapter. Importing it loads the
package only when an environment is built.
"""
