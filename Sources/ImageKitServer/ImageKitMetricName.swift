/// The names of the metrics ImageKitServer reports, in one place: every label is `imagekit_`
/// followed by snake case, with Prometheus's unit suffixes (`_total` for counters, `_seconds`
/// for timers, `_bytes` for sizes). Each metric always carries the same dimensions, listed with
/// it; their values are lowercase words.
///
/// ``ImageKitMetrics`` reports the counters and timers as events happen;
/// ``ImageManagerStatisticsReporter`` reports the gauges (and the eviction counters) from the
/// statistics when asked.
public enum ImageKitMetricName {
    // MARK: Loads (ImageKitMetrics, from the manager's events)

    /// Counter: loads ended, by `result` (`success`, `failure`, `cancelled`) and `tier`
    /// (`memory`, `disk`, `network` for a success; `none` otherwise). A refreshed load whose image
    /// changed counts twice.
    public static let loads = "imagekit_loads_total"
    /// Timer: from the call to the end of a load, with the dimensions of ``loads``.
    public static let loadDuration = "imagekit_load_duration_seconds"
    /// Counter: failed loads by `error`, the failure's kind (`http_status`, `timed_out`,
    /// `corrupt`, `blocklisted`, `overloaded`, … — one word per ``ImageKit/ImageKitError`` case).
    public static let loadFailures = "imagekit_load_failures_total"
    /// Counter: cache lookups by `tier` (`memory`, `disk`, `original`: the disk tier's original
    /// bytes) and `result` (`hit`, `miss`).
    public static let cacheQueries = "imagekit_cache_queries_total"
    /// Timer: disk lookups by `tier` (`disk`, `original`); memory lookups (well under a
    /// microsecond) are counted only.
    public static let cacheQueryDuration = "imagekit_cache_query_duration_seconds"
    /// Timer: decodes that succeeded (thumbnailing included).
    public static let decodeDuration = "imagekit_decode_duration_seconds"
    /// Timer: transformer runs that succeeded.
    public static let transformDuration = "imagekit_transform_duration_seconds"
    /// Timer: encodes of variants that succeeded, by `format` (`jpeg`, `png`, `webp`).
    public static let encodeDuration = "imagekit_encode_duration_seconds"
    /// Timer: writes to a cache tier, by `tier` (`memory`, `disk`).
    public static let storeDuration = "imagekit_store_duration_seconds"
    /// Counter: pipeline stages that failed, by `stage` (`decode`, `transform`, `encode`,
    /// `store`); a failed store does not fail its load.
    public static let stageFailures = "imagekit_stage_failures_total"

    // MARK: Downloads (ImageKitMetrics, from the downloader's events: one per transfer)

    /// Counter: transfers ended, by `result`: `ok` (2xx), `not_modified` (304), `http_error`
    /// (another status), `failed` (network, timeout, limits, TLS, …) or `cancelled`.
    public static let downloads = "imagekit_downloads_total"
    /// Counter: body bytes received (after content decoding), failed transfers included.
    public static let downloadBytes = "imagekit_download_bytes_total"
    /// Timer: whole transfers that got a response, redirects included (libcurl's total).
    public static let downloadDuration = "imagekit_download_duration_seconds"
    /// Timer: time to the first response byte of transfers that got a response.
    public static let downloadFirstByte = "imagekit_download_first_byte_seconds"

    // MARK: Gauges (ImageManagerStatisticsReporter, from the statistics)

    /// Gauge: bytes held by a cache tier, by `tier` (`memory`: pixels and variant bytes; `disk`:
    /// entry files).
    public static let cacheSize = "imagekit_cache_size_bytes"
    /// Gauge: entries held by a cache tier, by `tier`.
    public static let cacheEntries = "imagekit_cache_entries"
    /// Counter: entries removed by a cache tier, by `tier` (`memory`, `disk`) and `reason`
    /// (`limit`: to stay within the size limits, `expired`: past their age).
    public static let cacheEvictions = "imagekit_cache_evictions_total"
    /// Gauge: loads neither ended nor cancelled.
    public static let loadsInFlight = "imagekit_loads_in_flight"
    /// Gauge: pipelines by `state`: `active` (holding a turn to download and decode) or
    /// `waiting` (for a turn).
    public static let pipelines = "imagekit_pipelines"
    /// Gauge: the downloader's transfers by `state`: `queued` (its queue depth) or `running`.
    public static let downloadsInFlight = "imagekit_downloads_in_flight"
    /// Gauge: bytes of download bodies alive (being received or still held by a load).
    public static let downloadBodyBytes = "imagekit_download_body_bytes"
    /// Gauge: URLs on the failed-URL blocklist.
    public static let blocklistedURLs = "imagekit_blocklisted_urls"
}
