/**
 * What a file-system errno means for someone writing the sessions root, in a
 * few words ("the disk is full"), or undefined for an errno without a hint.
 */
export function errnoHint(errno: string | undefined): string | undefined {
  switch (errno) {
    case "EROFS":
      return "the sessions root is on a read-only file system";
    case "EACCES":
    case "EPERM":
      return "no permission to write there";
    case "ENOSPC":
      return "the disk is full";
    case "EDQUOT":
      return "the disk quota is exhausted";
    case "EEXIST":
    case "ENOTDIR":
      return "a file is in the way, not a directory";
    default:
      return undefined;
  }
}
