import CParentDeath
import Foundation

/// `WEFT_DIE_WITH_PARENT=PID`, a testing aid (Docs/CLI.md): the command dies with its parent, so that
/// daemons a test started do not outlive a test process that crashed or was killed.
enum ParentDeath {
    /// The environment variable, as the C shim reads it.
    static let variable = WEFT_PARENT_DEATH_VARIABLE

    /// Arms the watch on the parent when the environment asks for it; a request that cannot be honoured
    /// is a usage error (exit 2) before the command does anything.
    static func armIfAsked() {
        var parent: Int32 = 0
        let message: String
        switch weft_parent_death_arm(&parent) {
        case .notAsked, .armed: return
        case .invalidValue:
            message = "invalid \(variable): it names the pid of this command's parent, a number from 1"
        case .notParent:
            let named = ProcessInfo.processInfo.environment[variable] ?? ""
            message = "\(variable)=\(named) is not the parent (pid \(parent)): it ended, or the variable was inherited"
        case .unavailable:
            message = "\(variable) cannot be honoured here: \(String(cString: strerror(errno)))"
        }
        ClientFailure(code: .usage, message).exit()
    }
}
