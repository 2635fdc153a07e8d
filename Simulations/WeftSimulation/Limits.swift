/// Named limits of the simulator.
public enum SimulationLimits {
    /// Fewest and most replicas in one run.
    public static let replicasMin = 2
    public static let replicasMax = 16
    /// Most simulated ticks of the healing phase before a run is declared not converging.
    public static let ticksMaxConvergence = 20_000
}
