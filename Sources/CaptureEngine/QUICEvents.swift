import HTTPModel
import QUIC

/// Where the QUIC layer's events go: connection lines and warnings to the HTTP events every view shows.
enum QUICEvents {
    static func forward(_ event: QUICEvent, to deliver: (CaptureEvent) -> Void) {
        switch event {
        case .notice(let notice):
            deliver(.http(.notice(notice)))
        case .warning(let connection, let warning, let time):
            deliver(.http(.warning(connection: connection, message: warning.description, time: time)))
        case .opened, .streamData, .streamGap, .streamReset, .stopSending, .connectionClose, .closed:
            break
        }
    }
}
