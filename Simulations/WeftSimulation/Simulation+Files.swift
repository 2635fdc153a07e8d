import Foundation

// MARK: - Temporary files

// SQLite stores live in a folder of their own under shared memory or the temporary directory, named after the
// process, the seed and this simulation, and removed when the run ends. The name never reaches the
// simulated world, so it cannot change a run.
extension Simulation {
    func temporaryFolder() throws -> String {
        if let sqliteFolder { return sqliteFolder }
        let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        let name = "weft-sim-\(ProcessInfo.processInfo.processIdentifier)-\(scenario.seed)-\(address)"
        let folder = Simulation.temporaryRoot.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        sqliteFolder = folder
        return folder
    }

    /// Where the folders go: shared memory when the machine has it (`/dev/shm`), else the temporary
    /// directory. The simulator crashes processes, not machines, so an fsync protects nothing here;
    /// on a disk it only made the SQLite seeds wait for the device.
    static let temporaryRoot: URL = {
        var isFolder: ObjCBool = false
        let shared = "/dev/shm"
        if FileManager.default.fileExists(atPath: shared, isDirectory: &isFolder), isFolder.boolValue,
            FileManager.default.isWritableFile(atPath: shared)
        {
            return URL(fileURLWithPath: shared, isDirectory: true)
        }
        return FileManager.default.temporaryDirectory
    }()

    /// Closes every disk and removes the temporary folder.
    func closeDisks() {
        for replica in replicas { replica.disk.close() }
        if let sqliteFolder { try? FileManager.default.removeItem(atPath: sqliteFolder) }
        sqliteFolder = nil
    }
}
