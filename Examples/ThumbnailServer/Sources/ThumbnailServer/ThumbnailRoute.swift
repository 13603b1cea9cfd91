import Foundation
import HTTPTypes
import Hummingbird
import ImageKit

/// `GET /thumb/{name...}?w=N[&h=M][&gravity=G][&format=jpeg|webp|png]` (and `HEAD`):
/// `ORIGIN/name` shrunk to fit N×N pixels, encoded; with `h` or `gravity`, shrunk to fill N×M
/// (M defaults to N), keeping the part `gravity` names: `center` (the default), a compass point
/// (`north`, `southeast`, …), `focus(x,y)` (fractions 0…1) or `smart` (where the interest is).
struct ThumbnailRoute: Sendable {
    /// The origin's base URL, without a trailing slash.
    let origin: String
    /// The manager every request loads through.
    let manager: ImageManager
    /// The largest `w` answered; past it, 400.
    let maxWidth: Int
    /// The open connections, to cancel a load when its client goes.
    let connections: ClientConnections

    /// Answers one request for `name`.
    func respond(_ request: Request, name: String, context: ThumbnailRequestContext) async -> Response {
        guard !name.isEmpty, !climbsOut(name) else {
            return text(.badRequest, "bad image name")
        }
        let query = request.uri.queryParameters  // parsed on each access: once
        guard let w = query.get("w", as: Int.self), (1...maxWidth).contains(w) else {
            return text(.badRequest, "w must be a width from 1 to \(maxWidth)")
        }
        let gravityName = query.get("gravity")
        guard let gravity = gravityName.map(Gravity.init(key:)) ?? .center else {
            return text(.badRequest, "gravity must be center, north, northeast, east, southeast, south, southwest, west, northwest, focus(x,y) or smart")
        }
        let h = query.get("h")
        guard let height = h.map(Int.init) ?? w, (1...maxWidth).contains(height) else {
            return text(.badRequest, "h must be a height from 1 to \(maxWidth)")
        }
        var fill = ImageContext(thumbnailPixelSize: PixelSize(width: w, height: height),
                                thumbnailMode: gravityName == nil && h == nil ? .fit : .fill)
        fill.thumbnailGravity = gravity
        let imageContext = fill
        let format: OutputFormat
        switch query.get("format") {
        case nil: format = .negotiate(accept: request.headers[.accept], quality: 80)
        case "jpeg": format = .fixed(.jpeg(quality: 80))
        case "webp": format = .fixed(.webp(quality: 80))
        case "png": format = .fixed(.png())
        default: return text(.badRequest, "format must be jpeg, webp or png")
        }
        guard let url = URL(string: "\(origin)/\(name)") else { return text(.badRequest, "bad image name") }

        // The load runs while the client is there: when it goes, ImageKit cancels the load
        // (unless another request shares it) and the answer (499) is read by nobody. A
        // connection that is no longer found has closed already.
        guard let connection = connections.connection(of: context.channel) else {
            return failure(.cancelled)
        }
        let manager = self.manager
        let outcome = await connection.run { () async -> Result<EncodedImageResult, ImageKitError> in
            do throws(ImageKitError) {
                return .success(try await manager.encodedImage(
                    for: url, as: format, context: imageContext))
            } catch {
                return .failure(error)
            }
        }
        let result: EncodedImageResult
        switch outcome {
        case .success(let success):
            result = success
        case .failure(let error):
            return failure(error)
        }

        let image = result.encoded
        var headers: HTTPFields = [
            .eTag: image.entityTag,
            .cacheControl: "public, max-age=31536000, immutable",
            .xCache: result.source.isCached ? result.source.description : "miss",  // memory, disk or miss
        ]
        if format.variesWithAccept { headers[.vary] = "Accept" }
        if request.headers[.ifNoneMatch] == image.entityTag {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = image.contentType
        return Response(status: .ok, headers: headers, body: responseBody(image.data, eventLoop: context.channel.eventLoop))
    }
}

/// The answer to a failed load. The status follows the error's code: the origin's 404 becomes
/// ours, a corrupt image 422, a timeout 504, too many waiting loads 503 and so on. The message is
/// chosen by the code too: the error's own message may name the origin, its host or credentials.
func failure(_ error: ImageKitError) -> Response {
    var response = text(HTTPResponse.Status(code: error.suggestedHTTPStatus), "\(error.clientMessage) (\(error.code.name))")
    if error.code == .overloaded { response.headers[.retryAfter] = "1" }
    return response
}

extension HTTPField.Name {
    /// Where the answer came from: `memory`, `disk` or `miss` (downloaded).
    static let xCache = HTTPField.Name("X-Cache")!
}

/// A short plain-text answer.
func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
    Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"],
             body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
}
