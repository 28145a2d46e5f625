/* Stub of macOS 14.4's <os/os_sync_wait_on_address.h>, as Apple documents it. */
#include <stddef.h>
#include <stdint.h>
typedef uint32_t os_sync_wait_on_address_flags_t;
typedef uint32_t os_sync_wake_by_address_flags_t;
#define OS_SYNC_WAIT_ON_ADDRESS_NONE 0u
#define OS_SYNC_WAKE_BY_ADDRESS_NONE 0u
int os_sync_wait_on_address(void *addr, uint64_t value, size_t size,
                            os_sync_wait_on_address_flags_t flags);
int os_sync_wake_by_address_any(void *addr, size_t size, os_sync_wake_by_address_flags_t flags);
int os_sync_wake_by_address_all(void *addr, size_t size, os_sync_wake_by_address_flags_t flags);
