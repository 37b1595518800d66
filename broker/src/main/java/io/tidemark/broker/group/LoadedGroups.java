package io.tidemark.broker.group;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The group metadata met while the offsets topic is replayed: only the newest record of each group
 * is kept (a later record replaces an earlier one, a tombstone drops it), so replay holds at most
 * one {@link StoredGroup} per live group however long the log is. Owned by the coordinator thread
 * during load; not thread-safe.
 */
final class LoadedGroups {

  private final Map<String, StoredGroup> latest = new LinkedHashMap<>();

  void replay(OffsetLog.GroupEntry e) {
    if (e.metadata() == null) {
      latest.remove(e.group());
    } else {
      latest.put(e.group(), e.metadata());
    }
  }

  /** The newest metadata of each group not deleted, by group id. */
  Map<String, StoredGroup> groups() {
    return Collections.unmodifiableMap(latest);
  }
}
