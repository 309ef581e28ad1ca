// SPDX-License-Identifier: MIT
/*
 * One table file read through, every block's checksum checked: RocksDB's SstFileReader, which the
 * C API of librocksdb 7.8 lacks, for kindex verify (verify.c, check_tables). A DB iterator over a
 * table's key range reads every other table in that range too — the whole store again for each
 * small table a flush makes — and ends silently at a block it cannot read; this reads the file's
 * own blocks, and says which one is damaged. The one C++ file of src/store, and the only one that
 * uses RocksDB's C++ API.
 */
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

extern "C" int store_table_check(const char *path, char **ret_err);

/* 0; or -1 with RocksDB's status as text in *ret_err (malloc'd: "Corruption: … in PATH"), which
 * store_errno reads; -ENOMEM. */
int store_table_check(const char *path, char **ret_err)
{
	try {
		rocksdb::Options opts;
		rocksdb::SstFileReader reader(opts);
		rocksdb::Status s = reader.Open(path);
		if (s.ok())
			s = reader.VerifyChecksum();
		if (s.ok())
			return 0;
		std::string m = s.ToString();
		if (m.find(path) == std::string::npos)
			m += std::string(" in ") + path; /* damaged_table finds the table by its name */
		*ret_err = strdup(m.c_str());
		return *ret_err ? -1 : -ENOMEM;
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
}
