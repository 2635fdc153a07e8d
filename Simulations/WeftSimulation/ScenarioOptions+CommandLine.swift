/// How options are written on the `weft-sim` command line, so that a failure can print the exact
/// command that replays it.
extension ScenarioOptions {
    /// The arguments that give these options (defaults are left out).
    ///
    /// ```swift
    /// options.commandLineArguments   // ["--replicas", "5", "--ops", "2000"]
    /// ```
    public var commandLineArguments: [String] {
        let defaults = ScenarioOptions()
        var arguments: [String] = []
        if replicasMin != defaults.replicasMin || replicasMax != defaults.replicasMax {
            arguments += [
                "--replicas", replicasMin == replicasMax ? "\(replicasMin)" : "\(replicasMin)-\(replicasMax)",
            ]
        }
        if opCount != defaults.opCount { arguments += ["--ops", "\(opCount)"] }
        if let topology { arguments += ["--topology", topology.rawValue] }
        if faults != defaults.faults {
            let names = FaultKind.allCases.filter(faults.contains).map(\.rawValue)
            arguments += ["--faults", names.isEmpty ? "none" : names.joined(separator: ",")]
        }
        if allFaults { arguments.append("--all-faults") }
        if let sabotage { arguments += ["--sabotage", sabotage.rawValue] }
        if storage != defaults.storage { arguments += ["--storage", storage.rawValue] }
        if sqliteShare != defaults.sqliteShare { arguments += ["--sqlite-share", "\(sqliteShare)"] }
        if lateJoinerShare != defaults.lateJoinerShare { arguments += ["--late-joiners", "\(lateJoinerShare)"] }
        if relationShare != defaults.relationShare { arguments += ["--relations", "\(relationShare)"] }
        if shareLeafShare != defaults.shareLeafShare { arguments += ["--share-leaves", "\(shareLeafShare)"] }
        return arguments
    }

    /// The command that replays `seed` with these options.
    public func replayCommand(seed: UInt64) -> String {
        (["weft-sim", "run", "--seed", "\(seed)"] + commandLineArguments).joined(separator: " ")
    }

    /// Parses a replica count ("5") or range ("2-8").
    /// - Throws: ``SimulationError/invalidScenario(reason:)``.
    public mutating func setReplicas(_ text: String) throws {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        switch parts.count {
        case 1 where parts[0] != nil:
            replicasMin = parts[0]!
            replicasMax = parts[0]!
        case 2 where parts[0] != nil && parts[1] != nil:
            replicasMin = parts[0]!
            replicasMax = parts[1]!
        default:
            throw SimulationError.invalidScenario(reason: "replicas must be a count or a range such as 2-8")
        }
    }

    /// Parses a comma-separated list of fault kinds ("none" for no fault, "all" for every kind).
    /// - Throws: ``SimulationError/invalidScenario(reason:)`` naming an unknown kind.
    public mutating func setFaults(_ text: String) throws {
        if text == "all" {
            faults = Set(FaultKind.allCases)
            return
        }
        if text == "none" {
            faults = []
            return
        }
        var kinds = Set<FaultKind>()
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            // Nothing (an unset variable in a script, a stray comma) is not `none`: say what is meant.
            guard !name.isEmpty else {
                throw SimulationError.invalidScenario(
                    reason: "\"\(text)\" names no fault; give `none`, `all`, or fault names separated by commas")
            }
            guard let kind = FaultKind(rawValue: String(name)) else {
                let known = FaultKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw SimulationError.invalidScenario(reason: "unknown fault \"\(name)\"; known: \(known)")
            }
            kinds.insert(kind)
        }
        faults = kinds
    }
}
