"""Navigation that learns from use: the five pheromones (:mod:`~palazzo.stigmergy.pheromone`),
Semantic A* (:mod:`~palazzo.stigmergy.pathfinding`), Active Inference agents
(:mod:`~palazzo.stigmergy.agents`) and the swarm (:mod:`~palazzo.stigmergy.swarm`)."""
