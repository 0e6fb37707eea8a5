/* The native rosbag2 SQLite reader of scripts/bench/native.py: rosbag2's own read query run
 * through libsqlite3 (as rosbag2_storage_default_plugins' SqliteStorage does: messages joined
 * with their topic, in timestamp order; for one topic in a window, the WHERE it adds, which
 * walks the `timestamp_idx` index). Each row's blob is lent by SQLite and looked at as
 * `bagscope bench --op iterate` looks at a message: its length counted and every 4096th byte
 * summed. Prints "messages bytes sum".
 *
 *   cc -O2 rosbag2_read.c -o rosbag2_read -lsqlite3
 *   rosbag2_read FILE.db3 [TOPIC START_OFFSET_S END_OFFSET_S]
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2 && argc != 5) {
    fprintf(stderr, "usage: rosbag2_read FILE.db3 [TOPIC START_OFFSET_S END_OFFSET_S]\n");
    return 2;
  }
  sqlite3 *db;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    fprintf(stderr, "%s\n", sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_stmt *st;
  const char *all =
      "SELECT data, timestamp, topics.name FROM messages JOIN topics ON messages.topic_id = "
      "topics.id ORDER BY messages.timestamp;";
  const char *window =
      "SELECT data, timestamp, topics.name FROM messages JOIN topics ON messages.topic_id = "
      "topics.id WHERE topics.name = ?1 AND messages.timestamp >= ?2 AND messages.timestamp < ?3 "
      "ORDER BY messages.timestamp;";
  if (sqlite3_prepare_v2(db, argc == 5 ? window : all, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "%s\n", sqlite3_errmsg(db));
    return 1;
  }
  if (argc == 5) {
    sqlite3_stmt *t0;
    sqlite3_prepare_v2(db, "SELECT MIN(timestamp) FROM messages;", -1, &t0, NULL);
    sqlite3_step(t0);
    int64_t start = sqlite3_column_int64(t0, 0);
    sqlite3_finalize(t0);
    sqlite3_bind_text(st, 1, argv[2], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, start + (int64_t)(atof(argv[3]) * 1e9));
    sqlite3_bind_int64(st, 3, start + (int64_t)(atof(argv[4]) * 1e9));
  }
  uint64_t n = 0, bytes = 0, sum = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const void *d = sqlite3_column_blob(st, 0);
    int len = sqlite3_column_bytes(st, 0);
    for (int i = 0; i < len; i += 4096) sum += ((const unsigned char *)d)[i];
    n += 1;
    bytes += (uint64_t)len;
  }
  if (rc != SQLITE_DONE) {
    fprintf(stderr, "%s\n", sqlite3_errmsg(db));
    return 1;
  }
  printf("%llu %llu %llu\n", (unsigned long long)n, (unsigned long long)bytes,
         (unsigned long long)sum);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return 0;
}
