import ArgumentParser
import WeftSimulation

/// The flags that decide how scenarios are drawn from seeds.
struct ScenarioFlags: ParsableArguments {
    @Option(name: .long, help: "Replicas per run: a count (5) or a range (2-8).")
    var replicas: String = "2-8"

    @Option(name: .long, help: "Ops written per run, all replicas together.")
    var ops: Int = ScenarioOptions().opCount

    @Option(name: .long, help: "hub or mesh; drawn per seed when absent.")
    var topology: String?

    @Option(name: .long, help: "Fault kinds a seed may enable, comma-separated, or all, or none.")
    var faults: String = "all"

    @Flag(name: .long, help: "Enable every allowed fault kind in every seed (no swarm subsets).")
    var allFaults = false

    @Option(
        name: .long,
        help: "A deliberately broken merge rule: \(Sabotage.allCases.map(\.rawValue).joined(separator: ", ")).")
    var sabotage: String?

    @Option(name: .long, help: "Where replicas keep their logs: memory (WeftStore's MemoryStore) or simulated.")
    var storage: String = StorageKind.memoryStore.rawValue

    @Option(name: .long, help: "Share of seeds in which one replica keeps its log in a SQLite file.")
    var sqliteShare: Double = ScenarioOptions().sqliteShare

    @Option(
        name: .long,
        help:
            "Share of hub seeds (3 replicas or more) where the last replica writes alone, unknown to the others, then joins."
    )
    var lateJoiners: Double = ScenarioOptions().lateJoinerShare

    @Option(name: .long, help: "Share of writes that are relation changes planned with integrity under /rel.")
    var relations: Double = ScenarioOptions().relationShare

    @Option(
        name: .long,
        help: "Share of hub seeds where replica 1 is a leaf the hub lets read and write only /items/i0 (its share).")
    var shareLeaves: Double = ScenarioOptions().shareLeafShare

    /// The scenario options these flags give.
    func options() throws -> ScenarioOptions {
        var options = ScenarioOptions()
        do {
            try options.setReplicas(replicas)
            try options.setFaults(faults)
            options.opCount = ops
            if let topology {
                guard let parsed = Topology(rawValue: topology) else {
                    throw ValidationError("unknown topology \(topology); use hub or mesh")
                }
                options.topology = parsed
            }
            options.allFaults = allFaults
            if let sabotage {
                guard let parsed = Sabotage(rawValue: sabotage) else {
                    let known = Sabotage.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ValidationError("unknown sabotage \(sabotage); known: \(known)")
                }
                options.sabotage = parsed
            }
            guard let kind = StorageKind(rawValue: storage), kind != .sqliteStore else {
                throw ValidationError("--storage must be memory or simulated (SQLite is chosen with --sqlite-share)")
            }
            options.storage = kind
            options.sqliteShare = sqliteShare
            options.lateJoinerShare = lateJoiners
            options.relationShare = relations
            options.shareLeafShare = shareLeaves
            try options.validate()
        } catch {
            throw ValidationError("\(error)")
        }
        return options
    }
}
