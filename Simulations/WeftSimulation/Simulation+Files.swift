import Foundation

// MARK: - Temporary files

// SQLite stores live in a folder of their own under the temporary directory, named after the
// process, the seed and this simulation, and removed when the run ends. The name never reaches the
// simulated world, so it cannot change a run.
extension Simulation {
    func temporaryFolder() throws -> String {
        if let sqliteFolder { return sqliteFolder }
        let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        let name = "weft-sim-\(ProcessInfo.processInfo.processIdentifier)-\(scenario.seed)-\(address)"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        sqliteFolder = folder
        return folder
    }

    /// Closes every disk and removes the temporary folder.
    func closeDisks() {
        for replica in replicas { replica.disk.close() }
        if let sqliteFolder { try? FileManager.default.removeItem(atPath: sqliteFolder) }
        sqliteFolder = nil
    }
}
