import ArgumentParser
import Foundation

/// Checks, before any work, that a report or a schedule can be written where it is to go: a swarm or
/// a shrink may run for hours, and a write that fails at the end loses what it found.
enum OutputFile {
    /// - Throws: `ValidationError` saying what is wrong with `path` and what to do instead.
    static func check(_ path: String) throws {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isFolder) {
            guard !isFolder.boolValue else {
                throw ValidationError("cannot write \(path): it is a folder; give --output a file name")
            }
            guard manager.isWritableFile(atPath: path) else {
                throw ValidationError("cannot write \(path): permission denied; give --output another file")
            }
            return
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard manager.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError(
                "cannot write \(path): the folder \(folder) does not exist; create it or give --output another file")
        }
        guard manager.isWritableFile(atPath: folder) else {
            throw ValidationError(
                "cannot write \(path): the folder \(folder) is not writable; give --output a file elsewhere")
        }
    }
}
