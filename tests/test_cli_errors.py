

def test_ctrl_c_in_compare_cancels_the_grid_and_exits_130():
    """Ctrl-C as a terminal sends it: to the whole process group, worker processes included."""
    p = subprocess.Popen([sys.executable, "-m", "ftlsim", "compare", "uniform:writes=100000000,seed=1",
                          "--ftl", "page,fast,bast,nftl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    time.sleep(4)
    os.killpg(p.pid, signal.SIGINT)
    started = time.monotonic()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert time.monotonic() - started < 10
    assert err.strip().splitlines() == ["interrupted"]
