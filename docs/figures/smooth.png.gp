set datafile separator ','
set datafile missing ''
set terminal pngcairo size 1600,650 noenhanced font ',10'
set output 'docs/figures/smooth.png'
set logscale x
set xrange [0.07:140]
set xtics (0.1, 1, 10, 100)
set xlabel 'Rate (Gbit/s)'
set grid
set key outside right top vertical font ',8'
set multiplot layout 1,3 title 'smooth (solid) beside correlated (dashed), t_h 21 ms, mean 10 ms'
unset logscale y
set ylabel 'Mean delay deviation (%)'
unset key
plot 'docs/figures/smooth.csv' every ::1 using (($6==0.1 && strcol(2) eq "smooth") ? $4 * 0.9125 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 1 title 'smooth, jitter 0.1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.3 && strcol(2) eq "smooth") ? $4 * 0.9375 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 1 title 'smooth, jitter 0.3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==1 && strcol(2) eq "smooth") ? $4 * 0.9625 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 1 title 'smooth, jitter 1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==3 && strcol(2) eq "smooth") ? $4 * 0.9875 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 1 title 'smooth, jitter 3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.1 && strcol(2) eq "correlated") ? $4 * 1.0125 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 2 title 'correlated, jitter 0.1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.3 && strcol(2) eq "correlated") ? $4 * 1.0375 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 2 title 'correlated, jitter 0.3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==1 && strcol(2) eq "correlated") ? $4 * 1.0625 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 2 title 'correlated, jitter 1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==3 && strcol(2) eq "correlated") ? $4 * 1.0875 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 2 title 'correlated, jitter 3 ms'
unset logscale y
set ylabel 'Jitter deviation (%)'
unset key
plot 'docs/figures/smooth.csv' every ::1 using (($6==0.1 && strcol(2) eq "smooth") ? $4 * 0.9125 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 1 title 'smooth, jitter 0.1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.3 && strcol(2) eq "smooth") ? $4 * 0.9375 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 1 title 'smooth, jitter 0.3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==1 && strcol(2) eq "smooth") ? $4 * 0.9625 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 1 title 'smooth, jitter 1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==3 && strcol(2) eq "smooth") ? $4 * 0.9875 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 1 title 'smooth, jitter 3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.1 && strcol(2) eq "correlated") ? $4 * 1.0125 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 2 title 'correlated, jitter 0.1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.3 && strcol(2) eq "correlated") ? $4 * 1.0375 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 2 title 'correlated, jitter 0.3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==1 && strcol(2) eq "correlated") ? $4 * 1.0625 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 2 title 'correlated, jitter 1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==3 && strcol(2) eq "correlated") ? $4 * 1.0875 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 2 title 'correlated, jitter 3 ms'
set logscale y
set ylabel 'Packets that waited (%)'
set key
plot 'docs/figures/smooth.csv' every ::1 using (($6==0.1 && strcol(2) eq "smooth") ? $4 * 0.9125 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 1 title 'smooth, jitter 0.1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.3 && strcol(2) eq "smooth") ? $4 * 0.9375 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 1 title 'smooth, jitter 0.3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==1 && strcol(2) eq "smooth") ? $4 * 0.9625 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 1 title 'smooth, jitter 1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==3 && strcol(2) eq "smooth") ? $4 * 0.9875 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 1 title 'smooth, jitter 3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.1 && strcol(2) eq "correlated") ? $4 * 1.0125 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 2 title 'correlated, jitter 0.1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==0.3 && strcol(2) eq "correlated") ? $4 * 1.0375 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 2 title 'correlated, jitter 0.3 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==1 && strcol(2) eq "correlated") ? $4 * 1.0625 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 2 title 'correlated, jitter 1 ms', \
     'docs/figures/smooth.csv' every ::1 using (($6==3 && strcol(2) eq "correlated") ? $4 * 1.0875 : 1/0):($29 > 0 ? $29 : 1e-4):(valid(30) ? $30 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 2 title 'correlated, jitter 3 ms'
unset multiplot
