def test_annealed_reward_rescores_the_incumbent_by_default():
    from langmarl.config import BaseConfig
    from langmarl.parl.config import ParallelTasksConfig

    assert ParallelTasksConfig().rescore_incumbent is True  # λ changes the reward per iteration
    assert BaseConfig().rescore_incumbent is False
    assert ParallelTasksConfig(rescore_incumbent=False).rescore_incumbent is False
