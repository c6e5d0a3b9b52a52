"""The models of a simulation: stand-ins for the world, seeded from the simulation's seed.

Arrivals and their keys, service times, the modelled source, sink and service, and the
declared CPU cost. Import them from ``lockgate.engine.simulation``.
"""
