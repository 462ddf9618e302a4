"""The embedded model: weights, batched generation, the engine and its backend."""
