/*
 * fetch_conns.c — the engine's idle HTTP/1 connections, so that no request is
 * sent over a connection holding unread input.
 *
 * An origin that sends more bytes than its Content-Length leaves them in the
 * connection. When they arrive after the body, libcurl before 8.0 returns the
 * connection to its pool and reads the leftover bytes as the answer to the next
 * request sent over it: another URL's body, from whoever controls that origin.
 * (Bytes arriving in the same read as the body's end make libcurl 7.88 close the
 * connection itself.) curl 8 refuses to reuse a connection with input waiting;
 * this does the same on any version:
 *
 * - when an HTTP/1 transfer completes on a connection libcurl keeps, its socket
 *   is noted under the connection's address pair (ic__conn_watch_note);
 * - just before a request goes over a connection (the pre-request callback of
 *   fetch_guard.c), the pair is looked up; when bytes are waiting on a noted
 *   socket, the socket is shut down. Sending the request then fails on a reused
 *   connection, which libcurl answers by closing it and sending the request
 *   again over a new connection (its "Connection died, retrying a fresh
 *   connect"), so the transfer gets its own response and keep-alive stays for
 *   every origin that keeps to its lengths.
 *
 * Entries are indexed by socket number (so a socket number reused by a newer
 * connection replaces its stale entry, and the table never holds more entries
 * than the process has descriptors) and chained in buckets by address pair for
 * the lookup. A looked-up socket is checked to still have that address pair
 * before anything is done to it. Engine thread only.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "ic_fetch_internal.h"

/* Buckets of the lookup by address pair (a power of two). */
#define IC_CONN_BUCKETS 1024u

/* Both ends of a TCP connection: addresses in IPv4-mapped form, then ports. */
typedef struct conn_key {
    uint8_t local[16];
    uint8_t peer[16];
    uint16_t local_port;
    uint16_t peer_port;
} conn_key;

typedef struct conn_entry {
    conn_key key;
    int next; /* next socket of the bucket, -1 at the end */
    bool used;
} conn_entry;

struct ic__conn_watch {
    int heads[IC_CONN_BUCKETS]; /* first socket of each bucket, -1 when empty */
    conn_entry *by_socket;      /* indexed by socket number */
    size_t capacity;
};

ic__conn_watch *ic__conn_watch_create(void) {
    ic__conn_watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    for (size_t i = 0; i < IC_CONN_BUCKETS; i++) w->heads[i] = -1;
    return w;
}

void ic__conn_watch_destroy(ic__conn_watch *w) {
    if (!w) return;
    free(w->by_socket);
    free(w);
}

static size_t bucket_of(const conn_key *k) {
    uint32_t h = 2166136261u; /* FNV-1a over the key */
    const uint8_t *p = (const uint8_t *)k;
    for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 16777619u;
    return h & (IC_CONN_BUCKETS - 1);
}

static bool same_key(const conn_key *a, const conn_key *b) {
    return a->local_port == b->local_port && a->peer_port == b->peer_port && memcmp(a->local, b->local, 16) == 0 &&
           memcmp(a->peer, b->peer, 16) == 0;
}

/* Reads an address and port from a socket address; false when it is not IP. */
static bool read_sockaddr(const struct sockaddr_storage *s, uint8_t addr[16], uint16_t *port) {
    if (s->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)s;
        memset(addr, 0, 10);
        addr[10] = addr[11] = 0xFF;
        memcpy(addr + 12, &in->sin_addr, 4);
        *port = ntohs(in->sin_port);
        return true;
    }
    if (s->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)s;
        memcpy(addr, &in6->sin6_addr, 16);
        *port = ntohs(in6->sin6_port);
        return true;
    }
    return false;
}

/* The address pair of a connected socket; false when it has none. */
static bool key_of_socket(int fd, conn_key *k) {
    struct sockaddr_storage local, peer;
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    memset(k, 0, sizeof *k);
    if (getsockname(fd, (struct sockaddr *)&local, &local_len) != 0 ||
        getpeername(fd, (struct sockaddr *)&peer, &peer_len) != 0) {
        return false;
    }
    return read_sockaddr(&local, k->local, &k->local_port) && read_sockaddr(&peer, k->peer, &k->peer_port);
}

static void unlink_socket(ic__conn_watch *w, int fd) {
    conn_entry *e = &w->by_socket[fd];
    int *link = &w->heads[bucket_of(&e->key)];
    while (*link != -1 && *link != fd) link = &w->by_socket[*link].next;
    if (*link == fd) *link = e->next;
    e->used = false;
}

void ic__conn_watch_note(ic__conn_watch *w, CURL *easy) {
    long version = 0;
    curl_socket_t fd = CURL_SOCKET_BAD;
    if (!w || curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version) != CURLE_OK) return;
    /* HTTP/2 and 3 frame every byte: input waiting there is no leftover. */
    if (version != CURL_HTTP_VERSION_1_0 && version != CURL_HTTP_VERSION_1_1) return;
    /* The socket of the connection libcurl kept; none when it closed it. */
    if (curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD || fd < 0) return;
    conn_key k;
    if (!key_of_socket(fd, &k)) return;
    size_t slot = (size_t)fd;
    if (slot >= w->capacity) {
        size_t cap = w->capacity ? w->capacity : 64;
        while (cap <= slot) cap *= 2;
        conn_entry *grown = realloc(w->by_socket, cap * sizeof *grown);
        if (!grown) return; /* unnoted: reused unchecked, as libcurl alone would */
        memset(grown + w->capacity, 0, (cap - w->capacity) * sizeof *grown);
        w->by_socket = grown;
        w->capacity = cap;
    }
    if (w->by_socket[slot].used) unlink_socket(w, fd); /* a closed connection's number, reused */
    conn_entry *e = &w->by_socket[slot];
    size_t b = bucket_of(&k);
    e->key = k;
    e->used = true;
    e->next = w->heads[b];
    w->heads[b] = fd;
}

bool ic__conn_watch_check(ic__conn_watch *w, const char *local_ip, int local_port, const char *peer_ip,
                         int peer_port) {
    if (!w || !local_ip || !peer_ip || local_port <= 0 || local_port > 65535 || peer_port <= 0 || peer_port > 65535) {
        return false;
    }
    ic_net_addr local, peer;
    if (!ic_net_addr_parse(local_ip, strlen(local_ip), &local) || !ic_net_addr_parse(peer_ip, strlen(peer_ip), &peer)) {
        return false;
    }
    conn_key k;
    memset(&k, 0, sizeof k);
    memcpy(k.local, local.bytes, 16);
    memcpy(k.peer, peer.bytes, 16);
    k.local_port = (uint16_t)local_port;
    k.peer_port = (uint16_t)peer_port;
    int fd = w->heads[bucket_of(&k)];
    while (fd != -1 && !same_key(&w->by_socket[fd].key, &k)) fd = w->by_socket[fd].next;
    if (fd == -1) return false; /* a new connection, or one never noted */
    unlink_socket(w, fd);       /* in use now; noted again when this transfer completes */
    conn_key now;
    if (!key_of_socket(fd, &now) || !same_key(&now, &k)) return false; /* the number went to another socket */
    char byte;
    if (recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) return false; /* nothing waiting (or closed: libcurl sees it) */
    shutdown(fd, SHUT_RDWR);
    return true;
}
