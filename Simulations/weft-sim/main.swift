import WeftSimulation
print("replicas: \(SimulationLimits.replicasMin)...\(SimulationLimits.replicasMax)")
