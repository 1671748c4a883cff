/* A small text file a user names (the thresholds file, the patcher's exclude list),
 * read whole: a regular file alone, so that a device or a FIFO named by mistake
 * neither blocks the program nor fills its memory (common.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int tt_read_small_file(const char *path, size_t max, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	/* (O_NONBLOCK: a FIFO's open returns at once; a regular file's reads are the same) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int err = 0;
	char *buf = NULL;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = TT_READ_NOT_REGULAR;
	else if ((uint64_t)st.st_size > max)
		err = -EFBIG;
	else if (!(buf = malloc((size_t)st.st_size + 1)))
		err = -ENOMEM;
	/* (A file that grows meanwhile is read up to the size it had.) */
	size_t got = 0;
	while (!err && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else
			got += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = 0;
	*text = buf;
	*len = got;
	return 0;
}

const char *tt_read_small_file_problem(int err)
{
	return err == TT_READ_NOT_REGULAR ? "not a regular file (a device, FIFO or directory: never read)" :
	       err == -EFBIG ? "larger than a text file of this kind may be" : strerror(-err);
}
