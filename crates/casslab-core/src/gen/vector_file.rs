//! Reading a file of vectors for a `vector<float, N>` generator: `.fvecs` (the ANN benchmarks'
//! format: per vector a little-endian `i32` dimension, then that many `f32`), `.npy` (NumPy's
//! format, version 1 to 3, a C-ordered two-dimensional array of `f4`, `f8`, `u1`, `i1`, `i2`,
//! `i4` or `i8`) and CSV (one vector a line, numbers separated by commas, spaces or tabs; a
//! first line that is not numbers is a header; `.csv.gz` is read through gzip). The result is
//! one flat `f32` matrix, row after row. Errors say which file, where and what to fix; nothing
//! here knows generators.

use std::io::Read;
use std::path::Path;

/// The vectors of a file: `rows` × `dims` floats, row after row.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorFile {
    pub dims: usize,
    pub values: Vec<f32>,
}

impl VectorFile {
    pub fn rows(&self) -> usize {
        self.values.len().checked_div(self.dims).unwrap_or(0)
    }
}

/// Reads `path` by its extension (`.fvecs`, `.npy`, `.csv`, `.csv.gz`, `.tsv`, `.txt`).
pub fn read_vectors(path: &Path) -> Result<VectorFile, String> {
    let shown = path.display();
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let read = if name.ends_with(".fvecs") {
        fvecs(&bytes)
    } else if name.ends_with(".npy") {
        npy(&bytes)
    } else if name.ends_with(".gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text).map_err(|e| format!("not gzip-compressed text: {e}"))?;
        csv(&text)
    } else if name.ends_with(".csv") || name.ends_with(".tsv") || name.ends_with(".txt") {
        csv(&String::from_utf8_lossy(&bytes))
    } else {
        Err("name it .fvecs, .npy, .csv (or .csv.gz): casslab reads vectors from those formats".to_string())
    };
    let file = read.map_err(|m| format!("{shown}: {m}"))?;
    if file.rows() == 0 {
        return Err(format!("{shown}: holds no vector"));
    }
    Ok(file)
}

fn fvecs(b: &[u8]) -> Result<VectorFile, String> {
    let mut out = Vec::new();
    let (mut at, mut dims) = (0usize, None);
    while at < b.len() {
        let head = b.get(at..at + 4).ok_or_else(|| format!("ends inside the header of the vector at byte {at}"))?;
        let d = i32::from_le_bytes(head.try_into().expect("four bytes"));
        if d <= 0 {
            return Err(format!("a vector of {d} dimensions at byte {at}; is it an .fvecs file?"));
        }
        let d = d as usize;
        match dims {
            None => dims = Some(d),
            Some(first) if first != d => return Err(format!("the vector at byte {at} has {d} dimensions, the first {first}")),
            Some(_) => {}
        }
        let body = b.get(at + 4..at + 4 + 4 * d).ok_or_else(|| format!("ends inside the vector at byte {at}"))?;
        out.extend(body.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("four bytes"))));
        at += 4 + 4 * d;
    }
    Ok(VectorFile { dims: dims.unwrap_or(0), values: out })
}

/// NumPy's `.npy`: magic, version, header length, a Python dict header, then the data.
fn npy(b: &[u8]) -> Result<VectorFile, String> {
    if !b.starts_with(b"\x93NUMPY") || b.len() < 10 {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (len, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        v => return Err(format!(".npy version {v} is not one casslab reads (1 to 3)")),
    };
    let header = b.get(start..start + len).ok_or("ends inside its header")?;
    let header = String::from_utf8_lossy(header);
    let field = |key: &str| -> Option<String> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        let end = if rest.starts_with('(') { rest.find(')')? + 1 } else { rest.find(',').unwrap_or(rest.len()) };
        Some(rest[..end].trim().trim_matches('\'').to_string())
    };
    if field("fortran_order").as_deref() == Some("True") {
        return Err("the array is in Fortran order; save it C-ordered (numpy.ascontiguousarray)".into());
    }
    let descr = field("descr").ok_or("its header names no dtype ('descr')")?;
    let shape = field("shape").ok_or("its header names no shape")?;
    let dims: Vec<usize> = shape
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("shape {shape} is not numbers"))?;
    let [rows, cols] = dims[..] else { return Err(format!("shape {shape}: casslab reads a two-dimensional array (rows, dimensions)")) };
    let data = &b[start + len..];
    let little = !descr.starts_with('>');
    let kind = descr.trim_start_matches(['<', '>', '|', '=']);
    let width = match kind {
        "f4" | "i4" => 4,
        "f8" | "i8" => 8,
        "i2" => 2,
        "u1" | "i1" => 1,
        other => return Err(format!("dtype {other} is not one casslab reads (f4, f8, u1, i1, i2, i4, i8)")),
    };
    let want = rows * cols * width;
    if data.len() < want {
        return Err(format!("holds {} bytes of data, its shape {shape} needs {want}", data.len()));
    }
    let word = |c: &[u8]| -> [u8; 8] {
        let mut w = [0u8; 8];
        if little {
            w[..c.len()].copy_from_slice(c);
        } else {
            for (i, x) in c.iter().rev().enumerate() {
                w[i] = *x;
            }
        }
        w
    };
    let values = data[..want]
        .chunks_exact(width)
        .map(|c| {
            let w = word(c);
            match kind {
                "f4" => f32::from_le_bytes([w[0], w[1], w[2], w[3]]),
                "f8" => f64::from_le_bytes(w) as f32,
                "u1" => w[0] as f32,
                "i1" => w[0] as i8 as f32,
                "i2" => i16::from_le_bytes([w[0], w[1]]) as f32,
                "i4" => i32::from_le_bytes([w[0], w[1], w[2], w[3]]) as f32,
                _ => i64::from_le_bytes(w) as f32,
            }
        })
        .collect();
    Ok(VectorFile { dims: cols, values })
}

fn csv(text: &str) -> Result<VectorFile, String> {
    let mut out = Vec::new();
    let mut dims = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(|c: char| c == ',' || c == ';' || c.is_whitespace()).filter(|s| !s.is_empty()).collect();
        let parsed: Result<Vec<f32>, _> = fields.iter().map(|f| f.trim_matches('"').parse::<f32>()).collect();
        let row = match parsed {
            Ok(r) => r,
            // a header line
            Err(_) if dims.is_none() && out.is_empty() => continue,
            Err(_) => return Err(format!("line {}: not all numbers", i + 1)),
        };
        match dims {
            None => dims = Some(row.len()),
            Some(d) if d != row.len() => return Err(format!("line {}: {} numbers, the first vector has {d}", i + 1, row.len())),
            Some(_) => {}
        }
        if let Some(bad) = row.iter().find(|x| !x.is_finite()) {
            return Err(format!("line {}: {bad} is not a finite number", i + 1));
        }
        out.extend(row);
    }
    Ok(VectorFile { dims: dims.unwrap_or(0), values: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        (dir, p)
    }

    #[test]
    fn fvecs_npy_and_csv_give_the_same_matrix() {
        let rows = [[1.0f32, 2.5, -3.0], [0.0, 4.0, 8.25]];
        let mut fv = Vec::new();
        for r in &rows {
            fv.extend(3i32.to_le_bytes());
            for x in r {
                fv.extend(x.to_le_bytes());
            }
        }
        let want = VectorFile { dims: 3, values: rows.concat() };
        let (_d, p) = write("v.fvecs", &fv);
        assert_eq!(read_vectors(&p).unwrap(), want);
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        npy.extend((header.len() as u16).to_le_bytes());
        npy.extend(header.as_bytes());
        for x in rows.concat() {
            npy.extend((x as f64).to_le_bytes());
        }
        let (_d, p) = write("v.npy", &npy);
        assert_eq!(read_vectors(&p).unwrap(), want);
        let (_d, p) = write("v.csv", b"a,b,c\n1,2.5,-3\n\n0, 4, 8.25\n");
        assert_eq!(read_vectors(&p).unwrap(), want);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"1 2.5 -3\n0 4 8.25\n").unwrap();
        let (_d, p) = write("v.csv.gz", &gz.finish().unwrap());
        assert_eq!(read_vectors(&p).unwrap(), want);
    }

    #[test]
    fn npy_of_small_integers_reads_as_floats() {
        let header = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }";
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        npy.extend((header.len() as u16).to_le_bytes());
        npy.extend(header.as_bytes());
        npy.extend([0u8, 16, 7, 255]);
        let (_d, p) = write("d.npy", &npy);
        assert_eq!(read_vectors(&p).unwrap(), VectorFile { dims: 2, values: vec![0.0, 16.0, 7.0, 255.0] });
    }

    #[test]
    fn bad_files_say_where_and_what_to_fix() {
        let (_d, p) = write("v.csv", b"1,2,3\n4,5\n");
        assert!(read_vectors(&p).unwrap_err().ends_with("line 2: 2 numbers, the first vector has 3"));
        let (_d, p) = write("v.csv", b"1,2\n4,x\n");
        assert!(read_vectors(&p).unwrap_err().contains("line 2: not all numbers"));
        let (_d, p) = write("v.fvecs", &[3, 0, 0, 0, 1, 2]);
        assert!(read_vectors(&p).unwrap_err().contains("ends inside the vector at byte 0"));
        let (_d, p) = write("v.npy", b"\x93NUMPY\x01\x00\x22\x00{'descr': '<c8', 'shape': (1, 2), }");
        assert!(read_vectors(&p).unwrap_err().contains("dtype c8"));
        let (_d, p) = write("v.bin", b"");
        assert!(read_vectors(&p).unwrap_err().contains("name it .fvecs, .npy"));
        let (_d, p) = write("v.csv", b"# nothing\n");
        assert!(read_vectors(&p).unwrap_err().contains("holds no vector"));
        assert!(read_vectors(Path::new("/nonexistent/v.npy")).unwrap_err().starts_with("cannot read /nonexistent/v.npy"));
    }
}
