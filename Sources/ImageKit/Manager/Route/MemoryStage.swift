import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The first, synchronous stage of every load, in the caller's context: validate the URL,
/// check the blocklist, run the options processor, compute the keys, look in the memory tier
/// (reported to the manager's observers and the load's). A memory hit with nothing more to do
/// ends the load here, without a ``LoadPlan``.
struct MemoryStage {
    /// What the stage found.
    enum Outcome: Sendable {
        case failed(URL?, ImageKitError)
        /// A memory hit with nothing more to do (built without a ``LoadPlan``).
        case hit(LoadResult, ImageOptions, DispatchQueue)
        /// A memory hit that a refresh or a read of the original bytes follows.
        case memoryHit(LoadPlan, LoadResult)
        case load(LoadPlan)
    }

    let manager: ImageManager

    func run(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions, _ context: ImageContext?,
             _ loadObservers: [any ImageLoadObserver]) -> Outcome {
        guard manager.accepting.load(ordering: .relaxed) else {
            return .failed(url, .shutDown("the image manager was shut down"))
        }
        guard let url, let string = manager.loadableString(url, context?.loader ?? manager.loader) else {
            return .failed(url, .invalidURL("\(url.map { "\"\(MessageURL.describe($0))\"" } ?? "no URL") is not an "
                + (manager.configuration.allowsLocalFiles ? "http, https or file" : "http or https")
                + " URL, nor one the manager's loader accepts"))
        }
        if !options.contains(.retryFailed), let failure = manager.failedURLs.failure(string) {
            return .failed(url, .blocklisted("\(MessageURL.describe(string)) failed earlier (\(failure.message)); "
                + "retry with .retryFailed or after the blocklist entry expires", original: failure))
        }
        var options = options
        var context = context ?? ImageContext()
        if let processor = manager.configuration.optionsProcessor {
            (options, context) = processor(url, options, context)
        }
        if let deadline = context.deadline, deadline <= .now {
            return .failed(url, .deadlineExceeded("the load's deadline had passed when it started"))
        }
        let keys = ImageLoadKeys(url: url, urlString: string, output: output, options: options, context: context,
                                 configuration: manager.configuration)
        let hit = LoadPlan.query(options, context).includesMemory
            ? memoryHit(url, keys, context.cache ?? manager.cache, loadObservers) : nil
        if let hit, !options.contains(.refreshCached), !options.contains(.queryMemoryData) {
            return .hit(hit, options, context.callbackQueue ?? manager.configuration.callbackQueue)
        }
        let plan = LoadPlan(url: url, keys: keys, output: output, options: options, context: context,
                            configuration: manager.configuration, cache: manager.cache, loader: manager.loader,
                            coder: manager.coders)
        return hit.map { .memoryHit(plan, $0) } ?? .load(plan)
    }

    /// What the memory tier holds for the load (the encoded variant for loads asking for
    /// bytes, else the decoded image), reported to the manager's observers and the load's.
    /// The cache's synchronous ``ImageCaching/memoryValue(forKey:kind:)`` answers it.
    private func memoryHit(_ url: URL, _ keys: ImageLoadKeys, _ cache: any ImageCaching,
                           _ loadObservers: [any ImageLoadObserver]) -> LoadResult? {
        let observed = !manager.events.isEmpty || !loadObservers.isEmpty
        let start = observed ? MonotonicClock.now() : 0
        var result: LoadResult?
        if let variantKey = keys.variantKey {
            if case .variant(let encoded)? = cache.memoryValue(forKey: variantKey, kind: .variant) {
                result = LoadResult(encoded: encoded, source: .memory, url: url, metrics: ImageLoadMetrics())
            }
        } else if case .image(let image)? = cache.memoryValue(forKey: keys.key, kind: .image) {
            result = LoadResult(image: image, source: .memory, url: url, metrics: ImageLoadMetrics())
        }
        if observed {
            manager.emit(.cacheQuery(url: url, key: keys.variantKey ?? keys.key, tier: .memory, hit: result != nil,
                                     duration: MonotonicClock.duration(since: start)), to: loadObservers)
        }
        return result
    }
}

extension MemoryStage.Outcome {
    /// The options after the options processor (none when the load failed before it).
    var options: ImageOptions {
        switch self {
        case .failed: []
        case .hit(_, let options, _): options
        case .memoryHit(let plan, _), .load(let plan): plan.options
        }
    }

    /// The queue completion handlers run on, once the context is known.
    var callbackQueue: DispatchQueue? {
        switch self {
        case .failed: nil
        case .hit(_, _, let queue): queue
        case .memoryHit(let plan, _), .load(let plan): plan.callbackQueue
        }
    }
}

extension ImageManager {
    /// The URL's string when the manager loads it: http(s) with a host, (when allowed) `file:`,
    /// or any other URL `loader` accepts. Which loader loads an http(s) or `file:` URL (and
    /// whether one does) is found when the load reaches the loader, after the cache tiers.
    func loadableString(_ url: URL, _ loader: any ImageLoading) -> String? {
        let string = url.absoluteString
        switch URLKind(string) {
        case .web(let hasHost):
            return hasHost ? string : nil
        case .file:
            return configuration.allowsLocalFiles && !url.path.isEmpty ? string : nil
        case .other:
            return loader.canLoad(url) ? string : nil
        }
    }
}
