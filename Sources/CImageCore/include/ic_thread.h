/*
 * ic_thread.h — small threading helpers the Swift layer cannot reach directly.
 */
#ifndef IC_THREAD_H
#define IC_THREAD_H

#ifdef __cplusplus
extern "C" {
#endif

/** Names the calling thread (truncated to the 15 bytes Linux allows). */
void ic_thread_set_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* IC_THREAD_H */
