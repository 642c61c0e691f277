//! The mount table (`/proc/self/mountinfo`): which file system holds a device, and for ext4 its
//! data mode. Options are compared as whole values (`data=ordered`), never by
//! prefix, fixing the upstream `strcmp`-on-a-slice bug.

/// The ext4 `data=` journaling mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ext4DataMode {
    /// `data=ordered`, or no `data=` option (the ext4 default).
    Ordered,
    /// `data=journal`, `data=writeback` or anything else.
    Other,
}

/// The file-system family as far as the fastpath cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FsKind {
    /// ext4 with its data mode.
    Ext4(Ext4DataMode),
    /// xfs.
    Xfs,
    /// Any other file system (named).
    Other(String),
}

/// One mount entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MountEntry {
    /// Device major number.
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Mount point.
    pub mount_point: String,
    /// File-system type (`ext4`, `xfs`, `tmpfs`, ...).
    pub fstype: String,
    /// Mount source (`/dev/nvme0n1p1`, ...).
    pub source: String,
    /// Per-mount and super-block options together.
    pub options: Vec<String>,
}

impl MountEntry {
    /// The value of option `name` (`Some("")` for a flag without `=`), searching per-mount
    /// options first, then super-block options.
    pub(crate) fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().find_map(|o| match o.split_once('=') {
            Some((k, v)) if k == name => Some(v),
            None if o == name => Some(""),
            _ => None,
        })
    }

    /// Classify the file system.
    pub(crate) fn kind(&self) -> FsKind {
        match self.fstype.as_str() {
            "ext4" => FsKind::Ext4(match self.option("data") {
                None | Some("ordered") => Ext4DataMode::Ordered,
                Some(_) => Ext4DataMode::Other,
            }),
            "xfs" => FsKind::Xfs,
            other => FsKind::Other(other.to_string()),
        }
    }
}

/// Undo the octal escapes (`\040` for space) of mountinfo fields.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse one mountinfo line; `None` for a malformed line.
pub(crate) fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let mut l = left.split(' ');
    let _id = l.next()?;
    let _parent = l.next()?;
    let (maj, min) = l.next()?.split_once(':')?;
    let _root = l.next()?;
    let mount_point = unescape(l.next()?);
    let mount_opts = l.next()?;
    let mut r = right.split(' ');
    let fstype = r.next()?.to_string();
    let source = unescape(r.next().unwrap_or(""));
    let super_opts = r.next().unwrap_or("");
    let options = mount_opts
        .split(',')
        .chain(super_opts.split(','))
        .filter(|o| !o.is_empty())
        .map(str::to_string)
        .collect();
    Some(MountEntry {
        major: maj.parse().ok()?,
        minor: min.parse().ok()?,
        mount_point,
        fstype,
        source,
        options,
    })
}

/// Parse a whole mountinfo text.
pub(crate) fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

/// Read and parse `/proc/self/mountinfo`.
pub(crate) fn read_table() -> Result<Vec<MountEntry>, i32> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse(&t))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/// The first entry for device `major:minor`, scanning forward.
pub(crate) fn find(table: &[MountEntry], major: u32, minor: u32) -> Option<&MountEntry> {
    table.iter().find(|m| m.major == major && m.minor == minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
40 27 259:1 / /data rw - ext4 /dev/nvme0n1p1 rw,data=journal
41 27 259:2 / /mnt/x\\040y rw - xfs /dev/nvme1n1 rw,attr2
42 27 259:3 / /wb rw - ext4 /dev/nvme2n1 rw,data=writeback,errors=remount-ro
43 27 259:4 / /ord rw - ext4 /dev/nvme3n1 rw,data=ordered,errors=remount-ro
44 27 259:5 / /odd rw - ext4 /dev/nvme4n1 rw,data=order
";

    #[test]
    fn parses_and_classifies() {
        let t = parse(SAMPLE);
        assert_eq!(t.len(), 7);
        assert_eq!(
            find(&t, 254, 0).unwrap().kind(),
            FsKind::Ext4(Ext4DataMode::Ordered)
        );
        assert_eq!(
            find(&t, 0, 27).unwrap().kind(),
            FsKind::Other("tmpfs".into())
        );
        assert_eq!(
            find(&t, 259, 1).unwrap().kind(),
            FsKind::Ext4(Ext4DataMode::Other)
        );
        let x = find(&t, 259, 2).unwrap();
        assert_eq!(x.kind(), FsKind::Xfs);
        assert_eq!(x.mount_point, "/mnt/x y");
        assert_eq!(
            find(&t, 259, 3).unwrap().kind(),
            FsKind::Ext4(Ext4DataMode::Other)
        );
        // data= not last: whole-value comparison still sees "ordered".
        assert_eq!(
            find(&t, 259, 4).unwrap().kind(),
            FsKind::Ext4(Ext4DataMode::Ordered)
        );
        // A prefix of "ordered" is not "ordered".
        assert_eq!(
            find(&t, 259, 5).unwrap().kind(),
            FsKind::Ext4(Ext4DataMode::Other)
        );
        assert!(find(&t, 1, 1).is_none());
        assert_eq!(find(&t, 0, 27).unwrap().option("size"), Some("24684096k"));
    }

    #[test]
    fn first_match_wins_and_bad_lines_are_skipped() {
        let t =
            parse("garbage\n1 1 8:1 / /a rw - xfs /dev/a rw\n2 1 8:1 / /b rw - ext4 /dev/a rw\n");
        assert_eq!(t.len(), 2);
        assert_eq!(find(&t, 8, 1).unwrap().mount_point, "/a");
    }

    #[test]
    fn reads_this_machine() {
        assert!(!read_table().unwrap().is_empty());
    }
}
